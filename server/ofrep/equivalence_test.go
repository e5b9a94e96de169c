package ofrep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// fixed serves one compiled environment to every key.
type fixed struct{ env Environment }

func (f fixed) Environment(context.Context, uuid.UUID) (Environment, error) { return f.env, nil }
func (f fixed) Watch(context.Context, uuid.UUID, []string) (Watch, error) {
	return nil, fmt.Errorf("no watches here")
}

type serverKey struct{}

func (serverKey) Authenticate(context.Context, auth.Credentials) (*auth.Principal, error) {
	return &auth.Principal{Kind: auth.KindSDKKey, KeyID: 1, EnvironmentID: uuid.New()}, nil
}

type discard struct{}

func (discard) IngestImpressions(context.Context, *auth.Principal, uuid.UUID, []measure.ImpressionInput) error {
	return nil
}

func (discard) IngestSummaries(context.Context, *auth.Principal, uuid.UUID, []measure.SummaryInput) error {
	return nil
}

var (
	attrNames = []string{"country", "plan", "age", "beta", "email"}
	operators = []eval.Operator{eval.OpEquals, eval.OpNotEquals, eval.OpContains, eval.OpStartsWith, eval.OpEndsWith,
		eval.OpGreaterThan, eval.OpGreaterThanOrEqual, eval.OpLessThan, eval.OpLessThanOrEqual}
	words = []string{"DE", "FR", "pro", "free", "10", "30.5", "true", "a@x.io", "x", ""}
)

// randomValue is a JSON value of the flag's type, or null.
func randomValue(r *rand.Rand, t eval.FlagType) json.RawMessage {
	if r.IntN(8) == 0 {
		return json.RawMessage("null")
	}
	switch t {
	case eval.FlagTypeString:
		return json.RawMessage(`"` + words[r.IntN(len(words))] + `"`)
	case eval.FlagTypeInteger:
		return json.RawMessage(fmt.Sprint(r.IntN(2000) - 1000))
	case eval.FlagTypeJSON:
		return json.RawMessage(fmt.Sprintf(`{"n":%d,"on":%t,"l":["%s"]}`, r.IntN(9), r.IntN(2) == 0, words[r.IntN(len(words))]))
	}
	return json.RawMessage(fmt.Sprint(r.IntN(2) == 0))
}

func randomFlags(r *rand.Rand, n int) []eval.Flag {
	types := []eval.FlagType{eval.FlagTypeBoolean, eval.FlagTypeString, eval.FlagTypeInteger, eval.FlagTypeJSON}
	flags := make([]eval.Flag, n)
	for i := range flags {
		t := types[r.IntN(len(types))]
		f := eval.Flag{Key: fmt.Sprintf("flag-%d", i), IsEnabled: r.IntN(5) > 0, FlagType: t, Version: int64(1 + r.IntN(9)),
			DefaultValue: randomValue(r, t), DisabledValue: randomValue(r, t)}
		if r.IntN(2) == 0 {
			pct := r.IntN(101)
			f.RolloutPercentage = &pct
		}
		for range r.IntN(3) {
			rule := eval.Rule{Attribute: attrNames[r.IntN(len(attrNames))], Operator: operators[r.IntN(len(operators))]}
			for range 1 + r.IntN(2) {
				rule.Values = append(rule.Values, words[r.IntN(len(words))])
			}
			if t != eval.FlagTypeBoolean && r.IntN(2) == 0 {
				rule.Variant = randomValue(r, t)
			}
			f.Rules = append(f.Rules, rule)
		}
		if t != eval.FlagTypeBoolean && r.IntN(3) == 0 {
			for range 1 + r.IntN(3) {
				f.Variants = append(f.Variants, eval.Variant{Weight: r.IntN(5), Value: randomValue(r, t)})
			}
		}
		if i > 0 && r.IntN(4) == 0 {
			f.Prerequisites = append(f.Prerequisites, eval.Prerequisite{FlagKey: fmt.Sprintf("flag-%d", r.IntN(i))})
		}
		flags[i] = f
	}
	return flags
}

func randomAttrs(r *rand.Rand) map[string]any {
	attrs := map[string]any{}
	for _, name := range attrNames {
		switch r.IntN(4) {
		case 0: // absent
		case 1:
			attrs[name] = words[r.IntN(len(words))]
		case 2:
			attrs[name] = float64(r.IntN(60)) + []float64{0, 0.5}[r.IntN(2)]
		case 3:
			attrs[name] = r.IntN(2) == 0
		}
	}
	return attrs
}

// Remote evaluation gives exactly what sdkgo/eval gives for the same flags,
// user and attributes: value (or its absence), reason, variant and version,
// over random flags of every type, random users and random attributes.
func TestRemoteEvaluationEqualsTheEvaluator(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	flags := randomFlags(r, 60)
	snap := eval.Compile(flags)
	h, err := NewHandler(Config{
		Auth: serverKey{}, Flags: fixed{Environment{Flags: snap, Tag: "t"}}, Keys: nil,
		Errors:      func(w http.ResponseWriter, _ *http.Request, err error) { http.Error(w, err.Error(), 500) },
		Exposures:   NewExposures(discard{}, ExposuresConfig{}),
		TokenSecret: "test secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		f := flags[r.IntN(len(flags))]
		user := fmt.Sprintf("user-%d", r.IntN(500))
		if r.IntN(10) == 0 {
			user = ""
		}
		attrs := randomAttrs(r)
		ctx := map[string]any{"targetingKey": user}
		for k, v := range attrs {
			ctx[k] = v
		}
		body, _ := json.Marshal(map[string]any{"context": ctx})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags/"+f.Key, bytes.NewReader(body)))
		if rec.Code != http.StatusOK {
			t.Fatalf("case %d: %d %s", i, rec.Code, rec.Body)
		}
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		direct := snap.Evaluate(f.Key, user, attrs)
		want := map[string]any{"key": f.Key, "reason": reason(direct.Reason), "metadata": map[string]any{"version": float64(f.Version)}}
		if direct.Value != nil {
			want["value"], want["variant"] = direct.Value, eval.RenderValue(direct.Value)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("case %d: flag %+v, user %q, attributes %v: OFREP differs from sdkgo/eval (-eval +ofrep):\n%s", i, f, user, attrs, d)
		}
	}
}
