package providertest

import (
	"encoding/json"
	"strconv"
)

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
