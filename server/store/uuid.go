package store

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// encodeUUIDsAsBytes makes m encode google/uuid's UUID, the type of every id
// in the generated queries, as the 16 bytes it is. pgx does not know the type
// and falls back to its driver.Valuer: it formats the id as text, tries and
// fails to encode that text in binary (formatting an error message), parses
// it back and encodes the result. In bulk ingest that fallback was over a
// third of the server's CPU per row, one environment id per row of COPY.
func encodeUUIDsAsBytes(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapUUID}, m.TryWrapEncodePlanFuncs...)
}

func tryWrapUUID(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if u, ok := value.(uuid.UUID); ok {
		return &uuidEncodePlan{}, pgtype.UUID{Bytes: u, Valid: true}, true
	}
	return nil, nil, false
}

// uuidEncodePlan hands a uuid.UUID to the plan of pgtype.UUID.
type uuidEncodePlan struct{ next pgtype.EncodePlan }

func (p *uuidEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(pgtype.UUID{Bytes: value.(uuid.UUID), Valid: true}, buf)
}
