package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Every measurement of ingest starts from the same state: a template
// database (the empty one the server migrated and seeded, or one holding the
// 5,000,000 seeded impressions) copied afresh for each run with CREATE
// DATABASE … TEMPLATE … STRATEGY FILE_COPY. The copy begins with a
// checkpoint, so every run starts with no dirty pages and every page's next
// change written whole to the WAL, the same for raw COPY, the ceiling and
// the gated run; none of them finds another's rows or index pages.

// admin is a connection to the maintenance database that creates, copies
// and drops the scratch databases, and watches the WAL.
type admin struct {
	conn   *pgx.Conn
	url    *url.URL
	prefix string
	keep   bool
	made   []string        // databases to drop at the end, newest last
	spare  map[string]bool // never dropped (-keep-seeded)
}

func newAdmin(ctx context.Context, adminURL string, keep bool) (*admin, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", adminURL, err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return &admin{conn: conn, url: u, prefix: fmt.Sprintf("switchyard_analytics_%d", time.Now().UnixNano()/1e6), keep: keep}, nil
}

// database is one scratch database.
type database struct {
	name, url string
	oid       uint32
}

func (a *admin) database(ctx context.Context, name string) (database, error) {
	u := *a.url
	u.Path = "/" + name
	d := database{name: name, url: u.String()}
	err := a.conn.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = $1`, name).Scan(&d.oid)
	return d, err
}

// create makes an empty database named after suffix.
func (a *admin) create(ctx context.Context, suffix string) (database, error) {
	name := a.prefix + "_" + suffix
	if _, err := a.conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return database{}, fmt.Errorf("create database: %w", err)
	}
	a.made = append(a.made, name)
	return a.database(ctx, name)
}

// clone copies template (which nothing may be connected to) into a new
// database named after suffix.
func (a *admin) clone(ctx context.Context, template database, suffix string) (database, error) {
	name := a.prefix + "_" + suffix
	if _, err := a.conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+template.name+" STRATEGY FILE_COPY"); err != nil {
		return database{}, fmt.Errorf("copy %s: %w", template.name, err)
	}
	a.made = append(a.made, name)
	return a.database(ctx, name)
}

// drop drops d now (unless -keep).
func (a *admin) drop(ctx context.Context, d database) {
	if a.keep {
		return
	}
	if _, err := a.conn.Exec(ctx, "DROP DATABASE "+d.name+" WITH (FORCE)"); err != nil {
		fmt.Fprintf(os.Stderr, "drop %s: %v\n", d.name, err)
		return
	}
	for i, n := range a.made {
		if n == d.name {
			a.made = append(a.made[:i], a.made[i+1:]...)
			break
		}
	}
}

// close drops every database still there (unless -keep) and disconnects.
func (a *admin) close() {
	ctx := context.Background()
	defer a.conn.Close(ctx)
	for i := len(a.made) - 1; i >= 0; i-- {
		if a.keep || a.spare[a.made[i]] {
			fmt.Printf("kept database %s\n", a.made[i])
			continue
		}
		if _, err := a.conn.Exec(ctx, "DROP DATABASE "+a.made[i]+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "drop %s: %v\n", a.made[i], err)
		}
	}
}

// walUse is the WAL written over a phase.
type walUse struct {
	records, bytes, fpis, fpiBytes int64 // the database's own, from its WAL records
	cluster                        int64 // bytes, pg_stat_wal: every database of the cluster
	otherCommits                   int64 // transactions other databases committed meanwhile
}

// walMeter measures the WAL a database writes: a temporary physical
// replication slot keeps the WAL from the start (checkpoints would recycle
// it), and pg_walinspect then reads the records between the two positions
// and keeps those that change a block of the database's relations. Other
// databases share the WAL (other work on the machine), so pg_stat_wal,
// which counts the whole cluster's, would charge their writes to the run.
type walMeter struct {
	a    *admin
	d    database
	slot string
	lsn0 string
}

func (a *admin) startWAL(ctx context.Context, d database) (*walMeter, error) {
	m := &walMeter{a: a, d: d, slot: "bench_wal_" + d.name[len(d.name)-min(len(d.name), 20):]}
	if _, err := a.conn.Exec(ctx, `SELECT pg_create_physical_replication_slot($1, true, true)`, m.slot); err != nil {
		return nil, fmt.Errorf("replication slot (keeps the WAL to inspect): %w", err)
	}
	err := a.conn.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&m.lsn0)
	return m, err
}

// stop reads the database's WAL since start through pool (connected to a
// database with pg_walinspect) and releases the slot.
func (m *walMeter) stop(ctx context.Context, pool *pgxpool.Pool) (walUse, error) {
	var w walUse
	defer m.a.conn.Exec(context.WithoutCancel(ctx), `SELECT pg_drop_replication_slot($1)`, m.slot)
	var lsn1 string
	// Every committed record of the run is flushed.
	if err := m.a.conn.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&lsn1); err != nil {
		return w, err
	}
	err := pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(record_length), 0)::bigint,
		count(*) FILTER (WHERE fpi_length > 0), coalesce(sum(fpi_length), 0)::bigint
		FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) WHERE block_ref LIKE $3`,
		m.lsn0, lsn1, fmt.Sprintf("%%rel 1663/%d/%%", m.d.oid)).Scan(&w.records, &w.bytes, &w.fpis, &w.fpiBytes)
	if err != nil {
		return w, fmt.Errorf("pg_walinspect: %w", err)
	}
	return w, nil
}
