package core

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// flagFromRow turns a stored flag into the one wire model, eval.Flag, which
// is also the API's Flag object (segment references unexpanded).
func flagFromRow(r db.Flag) (eval.Flag, error) {
	f := eval.Flag{
		Key:           r.Key,
		EnvironmentID: r.EnvironmentID.String(),
		IsEnabled:     r.IsEnabled,
		Description:   r.Description,
		FlagType:      eval.FlagType(r.FlagType),
		DefaultValue:  r.DefaultValue,
		DisabledValue: r.DisabledValue,
		Tags:          r.Tags,
		OwnerEmail:    r.OwnerEmail,
		ArchivedAt:    r.ArchivedAt,
		ClientSide:    r.ClientSide,
		Version:       r.Version,
		CreatedAt:     r.CreatedAt,
		UpdatedAt:     r.UpdatedAt,
	}
	if r.RolloutPercentage != nil {
		pct := int(*r.RolloutPercentage)
		f.RolloutPercentage = &pct
	}
	for _, part := range []struct {
		raw  []byte
		into any
	}{{r.Rules, &f.Rules}, {r.Variants, &f.Variants}, {r.Prerequisites, &f.Prerequisites}} {
		if err := json.Unmarshal(part.raw, part.into); err != nil {
			return eval.Flag{}, fmt.Errorf("decode stored flag %q: %w", r.Key, err)
		}
	}
	return normalized(f), nil
}

// normalized gives a flag its defaults (empty lists, boolean type;
// docs/reference/flags.md, Flag fields) and stores a JSON null value as absent,
// so that equal flags compare and encode alike.
func normalized(f eval.Flag) eval.Flag {
	raw, _ := json.Marshal(f) // eval.Flag's encoder fills the defaults
	var out eval.Flag
	_ = json.Unmarshal(raw, &out)
	out.DefaultValue = nullToNil(out.DefaultValue)
	out.DisabledValue = nullToNil(out.DisabledValue)
	for i := range out.Rules {
		out.Rules[i].Variant = nullToNil(out.Rules[i].Variant)
	}
	return out
}

func nullToNil(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil
	}
	return v
}

// flagColumns are the stored columns of a flag's configuration.
type flagColumns struct {
	rollout       *int32
	rules         []byte
	variants      []byte
	prerequisites []byte
}

func columnsOf(f eval.Flag) (flagColumns, error) {
	var c flagColumns
	if f.RolloutPercentage != nil {
		pct := int32(*f.RolloutPercentage)
		c.rollout = &pct
	}
	var err error
	if c.rules, err = json.Marshal(f.Rules); err != nil {
		return c, err
	}
	if c.variants, err = json.Marshal(f.Variants); err != nil {
		return c, err
	}
	c.prerequisites, err = json.Marshal(f.Prerequisites)
	return c, err
}

func insertFlagParams(envID [16]byte, f eval.Flag) (db.InsertFlagParams, error) {
	c, err := columnsOf(f)
	return db.InsertFlagParams{
		EnvironmentID: envID, Key: f.Key, IsEnabled: f.IsEnabled, RolloutPercentage: c.rollout,
		Description: f.Description, FlagType: string(f.FlagType), DefaultValue: f.DefaultValue,
		DisabledValue: f.DisabledValue, Rules: c.rules, Variants: c.variants,
		Prerequisites: c.prerequisites, Tags: f.Tags, OwnerEmail: f.OwnerEmail, ClientSide: f.ClientSide,
	}, err
}

func updateFlagParams(id int64, f eval.Flag) (db.UpdateFlagParams, error) {
	c, err := columnsOf(f)
	return db.UpdateFlagParams{
		ID: id, IsEnabled: f.IsEnabled, RolloutPercentage: c.rollout,
		Description: f.Description, FlagType: string(f.FlagType), DefaultValue: f.DefaultValue,
		DisabledValue: f.DisabledValue, Rules: c.rules, Variants: c.variants,
		Prerequisites: c.prerequisites, Tags: f.Tags, OwnerEmail: f.OwnerEmail, ClientSide: f.ClientSide,
	}, err
}
