package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"
)

// table is an answer as rows for people: a header and one row per item.
type table struct {
	header []string
	rows   [][]string
}

// print writes v as the chosen output: JSON or YAML with the API's field
// names, or the table.
func (g *globals) print(v any, t table) error {
	switch g.output {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(g.out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = g.out.Write(b)
		return err
	case "table", "":
		return writeTable(g.out, t)
	}
	return usagef("--output %q: want table, json or yaml", g.output)
}

func writeTable(out io.Writer, t table) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	return w.Flush()
}

// when formats an optional time, or says none.
func when(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Format("2006-01-02 15:04")
}
