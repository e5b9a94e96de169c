package httpapi

import "github.com/oapi-codegen/nullable"

// nullableOf converts an optional value to the generated nullable type:
// nil is JSON null.
func nullableOf[T any](p *T) nullable.Nullable[T] {
	if p == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(*p)
}
