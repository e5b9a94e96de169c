package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DevSessionSecret is the SESSION_SECRET used when none is set. It is public, so
// it is only acceptable for local development over plain HTTP; Validate refuses
// it when COOKIE_SECURE is true.
const DevSessionSecret = "switchyard-insecure-development-session-secret"

// MinSessionSecretLen is the shortest SESSION_SECRET Validate accepts.
const MinSessionSecretLen = 32

// DefaultRedisURL is the REDIS_URL used when the variable is unset.
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// DefaultRedisChannel is the REDIS_CHANNEL used when the variable is unset:
// the channel every instance used before the variable existed, so upgraded
// deployments keep hearing each other (bus.DefaultChannel).
const DefaultRedisChannel = "switchyard:changes"

// LevelTrace is the slog level for RUST_LOG=trace, one step below debug.
const LevelTrace = slog.LevelDebug - 4

// Config is Switchyard's configuration, read by FromEnv. Each field names the
// environment variable it comes from.
type Config struct {
	// SessionSecret (SESSION_SECRET) keys the session cookie encryption.
	SessionSecret string
	// DatabaseURL (DATABASE_URL) is the PostgreSQL connection string. When
	// unset it is built from PostgresUser, PostgresPassword and PostgresDB for
	// 127.0.0.1:5432 with sslmode=disable.
	DatabaseURL string
	// RedisURL (REDIS_URL) is the Redis connection string. Empty means the
	// in-process bus (a single instance); see UsesRedis.
	RedisURL string
	// RedisChannel (REDIS_CHANNEL) is the Redis pub/sub channel the instances
	// of one deployment share. Deployments that share one Redis need
	// different channels, or each hears the other's changes.
	RedisChannel string
	// PostgresUser (POSTGRES_USER) is the bundled database's user.
	PostgresUser string
	// PostgresPassword (POSTGRES_PASSWORD) is the bundled database's password.
	PostgresPassword string
	// PostgresDB (POSTGRES_DB) is the bundled database's name.
	PostgresDB string
	// CookieSecure (COOKIE_SECURE) sets the Secure flag on cookies.
	CookieSecure bool
	// SDKKey (SDK_KEY) is an extra accepted SDK key; empty means none.
	SDKKey string
	// PublicDir (PUBLIC_DIR) holds the dashboard's static files.
	PublicDir string
	// Host (HOST) is the listen host; empty means all interfaces.
	Host string
	// Port (PORT) is the listen port; 0 picks a free port (tests).
	Port int
	// PublicURL (PUBLIC_URL) is the address browsers reach the server at,
	// without a trailing slash; single sign-on's redirect URI is built from
	// it. Default http://localhost:$PORT.
	PublicURL string
	// DBMaxConnections (DB_MAX_CONNECTIONS) is the connection pool size.
	DBMaxConnections int32
	// MeasureReadConnections (MEASURE_READ_CONNECTIONS) is the size of the
	// measurement reads' own pool (statistics, exposure, experiment results,
	// flag status, export), beside the main one: a slow read never takes a
	// connection that writes, authentication or ingest need.
	MeasureReadConnections int32
	// MeasureReadTimeout (MEASURE_READ_TIMEOUT) ends any statement of a
	// measurement read that runs longer.
	MeasureReadTimeout time.Duration
	// LogLevel (RUST_LOG) is the minimum level logged.
	LogLevel slog.Level
	// AdminEmail (ADMIN_EMAIL) and AdminPassword (ADMIN_PASSWORD), when both
	// are set, create a workspace admin on a boot that finds no user.
	AdminEmail string
	// AdminPassword (ADMIN_PASSWORD): see AdminEmail.
	AdminPassword string
	// AdminName (ADMIN_NAME) is the display name of that admin.
	AdminName string
	// WorkspaceName (WORKSPACE_NAME) names the workspace created on first boot.
	WorkspaceName string
	// RetentionDays (RETENTION_DAYS) is how many days of impressions and goal
	// events are kept; older ones are purged in the background.
	RetentionDays int
	// IngestMaxUnfolded (INGEST_MAX_UNFOLDED) is the unfolded impressions (or
	// goal events, or summaries) at which an ingest batch waits for the
	// background fold (server/measure/gate.go); 0 turns the wait off. The
	// default, 25,000, keeps stats, exposure and experiment reads within a
	// second on a two-core server; a larger value takes bursts faster and
	// lets reads slow down over the longer tail.
	IngestMaxUnfolded int
	// OFREPExposureMemory (OFREP_EXPOSURE_MEMORY) is how many (environment,
	// flag, user, value) exposures OFREP remembers having recorded as
	// impressions (server/ofrep/exposure.go): a remembered one's evaluation
	// is a summary count instead. About 70 bytes each; default
	// 1,000,000, the Go SDK's; 0 records one impression per evaluation.
	OFREPExposureMemory int
	// AuditKey (AUDIT_KEY) keys the MAC of every audit trail entry
	// (docs/audit.md); empty when unset, and TrailKey then falls back to
	// SessionSecret, so set it before rotating SESSION_SECRET if older
	// entries are to stay verifiable.
	AuditKey string
	// AuditRetentionDays (AUDIT_RETENTION_DAYS) is how many days of the audit
	// trail are kept; 0 (unset) keeps it forever.
	AuditRetentionDays int
	// TrustedProxies (TRUSTED_PROXIES: addresses and CIDR prefixes, comma
	// separated) are the proxies whose X-Forwarded-For names the client in
	// audit entries; none by default, so the peer address is recorded.
	TrustedProxies []netip.Prefix
	// MetricsAddr (METRICS_ADDR), when set, serves /metrics on a listener of
	// its own at this address and not on the main port.
	MetricsAddr string
	// MetricsToken (METRICS_TOKEN), when set, makes /metrics require
	// Authorization: Bearer <it>.
	MetricsToken string
}

// FromEnv reads the configuration through lookup, which behaves like
// os.LookupEnv, and applies the defaults. It returns every parse error at once,
// joined; each names its variable. FromEnv does not apply the start-up policy:
// call Validate for that.
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(name, def string) string {
		if v, ok := lookup(name); ok && v != "" {
			return v
		}
		return def
	}
	var errs []error

	c := Config{
		SessionSecret:    get("SESSION_SECRET", DevSessionSecret),
		PostgresUser:     get("POSTGRES_USER", "switchyard"),
		PostgresPassword: get("POSTGRES_PASSWORD", "switchyard"),
		PostgresDB:       get("POSTGRES_DB", "switchyard"),
		RedisChannel:     get("REDIS_CHANNEL", DefaultRedisChannel),
		SDKKey:           get("SDK_KEY", ""),
		PublicDir:        get("PUBLIC_DIR", "public"),
		Host:             get("HOST", ""),
		AdminEmail:       get("ADMIN_EMAIL", ""),
		AdminPassword:    get("ADMIN_PASSWORD", ""),
		AdminName:        get("ADMIN_NAME", "Admin"),
		WorkspaceName:    get("WORKSPACE_NAME", "Switchyard"),
		MetricsAddr:      get("METRICS_ADDR", ""),
		MetricsToken:     get("METRICS_TOKEN", ""),
	}
	c.AuditKey = get("AUDIT_KEY", "")

	c.DatabaseURL = get("DATABASE_URL", "")
	if c.DatabaseURL == "" {
		c.DatabaseURL = bundledDatabaseURL(c.PostgresUser, c.PostgresPassword, c.PostgresDB)
	}

	// REDIS_URL set to "" selects the in-process bus; unset means the local
	// default (docs/reference/stream.md, Multiple instances).
	if v, ok := lookup("REDIS_URL"); ok {
		c.RedisURL = v
	} else {
		c.RedisURL = DefaultRedisURL
	}

	var err error
	if c.CookieSecure, err = parseBool(get("COOKIE_SECURE", "true")); err != nil {
		errs = append(errs, fmt.Errorf("COOKIE_SECURE: %w", err))
	}
	if c.Port, err = parsePort(get("PORT", "3000")); err != nil {
		errs = append(errs, fmt.Errorf("PORT: %w", err))
	}
	c.PublicURL = strings.TrimRight(get("PUBLIC_URL", "http://localhost:"+strconv.Itoa(c.Port)), "/")
	if u, perr := url.Parse(c.PublicURL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("PUBLIC_URL: want an http or https URL, got %q", c.PublicURL))
	}
	if c.DBMaxConnections, err = parsePoolSize(get("DB_MAX_CONNECTIONS", "10")); err != nil {
		errs = append(errs, fmt.Errorf("DB_MAX_CONNECTIONS: %w", err))
	}
	if c.MeasureReadConnections, err = parsePoolSize(get("MEASURE_READ_CONNECTIONS", "3")); err != nil {
		errs = append(errs, fmt.Errorf("MEASURE_READ_CONNECTIONS: %w", err))
	}
	if c.MeasureReadTimeout, err = parseTimeout(get("MEASURE_READ_TIMEOUT", "30s")); err != nil {
		errs = append(errs, fmt.Errorf("MEASURE_READ_TIMEOUT: %w", err))
	}
	if c.LogLevel, err = ParseLogLevel(get("RUST_LOG", "info")); err != nil {
		errs = append(errs, fmt.Errorf("RUST_LOG: %w", err))
	}
	if c.RetentionDays, err = parseRetentionDays(get("RETENTION_DAYS", "90")); err != nil {
		errs = append(errs, fmt.Errorf("RETENTION_DAYS: %w", err))
	}
	if c.IngestMaxUnfolded, err = parseIngestMaxUnfolded(get("INGEST_MAX_UNFOLDED", "25000")); err != nil {
		errs = append(errs, fmt.Errorf("INGEST_MAX_UNFOLDED: %w", err))
	}
	if c.OFREPExposureMemory, err = parseExposureMemory(get("OFREP_EXPOSURE_MEMORY", "1000000")); err != nil {
		errs = append(errs, fmt.Errorf("OFREP_EXPOSURE_MEMORY: %w", err))
	}
	if v := get("AUDIT_RETENTION_DAYS", ""); v != "" {
		if c.AuditRetentionDays, err = parseRetentionDays(v); err != nil {
			errs = append(errs, fmt.Errorf("AUDIT_RETENTION_DAYS: %w", err))
		}
	}
	if c.TrustedProxies, err = parsePrefixes(get("TRUSTED_PROXIES", "")); err != nil {
		errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: %w", err))
	}
	if c.MetricsAddr != "" {
		if _, _, perr := net.SplitHostPort(c.MetricsAddr); perr != nil {
			errs = append(errs, fmt.Errorf("METRICS_ADDR: want host:port, got %q", c.MetricsAddr))
		}
	}

	if len(errs) > 0 {
		return Config{}, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	return c, nil
}

// Validate applies the start-up policy. Warnings are problems worth logging
// loudly that still let the server start; a non-nil error means it must not
// start.
func (c Config) Validate() (warnings []string, err error) {
	switch {
	case c.SessionSecret == DevSessionSecret:
		if c.CookieSecure {
			return nil, errors.New("config: SESSION_SECRET is the public development default while COOKIE_SECURE is true: " +
				"set SESSION_SECRET to a random value of at least 32 characters, or COOKIE_SECURE=false for local HTTP")
		}
		warnings = append(warnings, "SESSION_SECRET is the public development default: anyone can forge sessions; "+
			"set it to a random value of at least 32 characters outside local development")
	case len(c.SessionSecret) < MinSessionSecretLen:
		return nil, fmt.Errorf("config: SESSION_SECRET is %d characters long, want at least %d",
			len(c.SessionSecret), MinSessionSecretLen)
	}
	if (c.AdminEmail == "") != (c.AdminPassword == "") {
		warnings = append(warnings, "only one of ADMIN_EMAIL and ADMIN_PASSWORD is set: no admin will be created from them")
	}
	return warnings, nil
}

// TrailKey is the secret the audit trail's MAC key derives from: AUDIT_KEY,
// else SESSION_SECRET.
func (c Config) TrailKey() string {
	if c.AuditKey != "" {
		return c.AuditKey
	}
	return c.SessionSecret
}

// Addr returns the listen address, host:port, for net.Listen.
func (c Config) Addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// UsesRedis reports whether the Redis bus is configured; false means the
// in-process bus (REDIS_URL set to the empty string).
func (c Config) UsesRedis() bool {
	return c.RedisURL != ""
}

// ParseLogLevel turns a RUST_LOG value into a slog level. It accepts the
// words error, warn, info, debug and trace in any case, and env_logger-style
// directives such as "switchyard=debug" or "info,tower_http=warn": the level
// word of the last directive that has one wins. Module filters are not
// applied; they only locate the level word.
func ParseLogLevel(s string) (slog.Level, error) {
	directives := strings.Split(s, ",")
	for i := len(directives) - 1; i >= 0; i-- {
		d := strings.TrimSpace(directives[i])
		if j := strings.LastIndex(d, "="); j >= 0 {
			d = d[j+1:]
		}
		switch strings.ToLower(d) {
		case "error":
			return slog.LevelError, nil
		case "warn":
			return slog.LevelWarn, nil
		case "info":
			return slog.LevelInfo, nil
		case "debug":
			return slog.LevelDebug, nil
		case "trace":
			return LevelTrace, nil
		}
	}
	return 0, fmt.Errorf("no level in %q: want error, warn, info, debug or trace", s)
}

// bundledDatabaseURL is the connection string for the bundled PostgreSQL.
func bundledDatabaseURL(user, password, dbname string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(user, password),
		Host:     "127.0.0.1:5432",
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("invalid value %q: want true, false, 1 or 0", s)
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("not an integer: %w", err)
	}
	if n < 0 || n > 65535 {
		return 0, fmt.Errorf("invalid value %q: want 1 to 65535 (or 0 for any free port)", s)
	}
	return n, nil
}

// parseRetentionDays reads RETENTION_DAYS: a whole number of days, at least 1
// and at most 100 years.
func parseRetentionDays(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: not an integer", s)
	}
	if n < 1 || n > 36500 {
		return 0, fmt.Errorf("invalid value %q: want 1 to 36500 days", s)
	}
	return n, nil
}

func parseIngestMaxUnfolded(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: not an integer", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("invalid value %q: want 0 (no limit) or more rows", s)
	}
	return n, nil
}

// maxExposureMemory is the largest OFREP_EXPOSURE_MEMORY: about 75 GB of
// exposures, far past any machine, and the memory's index limit.
const maxExposureMemory = 1 << 30

func parseExposureMemory(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: not an integer", s)
	}
	if n < 0 || n > maxExposureMemory {
		return 0, fmt.Errorf("invalid value %q: want 0 (one impression per evaluation) to %d exposures", s, maxExposureMemory)
	}
	return n, nil
}

// parseTimeout reads a Go duration of at least a millisecond.
func parseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("not a duration such as 30s: %w", err)
	}
	if d < time.Millisecond {
		return 0, fmt.Errorf("invalid value %q: want at least 1ms", s)
	}
	return d, nil
}

func parsePoolSize(s string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("not a 32-bit integer: %w", err)
	}
	if n < 1 {
		return 0, fmt.Errorf("invalid value %q: want at least 1", s)
	}
	return int32(n), nil
}

// parsePrefixes reads a comma-separated list of IP addresses and CIDR
// prefixes; an address is a prefix of its full length.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("want IP addresses or CIDR prefixes, got %q", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
