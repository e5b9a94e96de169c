// Package openfeature is an OpenFeature provider backed by a Switchyard
// client: evaluations stay local; the evaluation context's targeting key is
// the user key and its other attributes are the user's attributes.
package openfeature

import (
	"context"

	of "github.com/open-feature/go-sdk/openfeature"

	"github.com/switchyard/switchyard/sdkgo"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// Provider adapts a *sdkgo.Client to OpenFeature.
type Provider struct {
	client *sdkgo.Client
}

var _ of.FeatureProvider = (*Provider)(nil)

// NewProvider returns a provider evaluating with client.
func NewProvider(client *sdkgo.Client) *Provider { return &Provider{client: client} }

// Metadata names the provider.
func (p *Provider) Metadata() of.Metadata { return of.Metadata{Name: "Switchyard"} }

// Hooks returns no provider hooks.
func (p *Provider) Hooks() []of.Hook { return nil }

// detail evaluates flag for the context's targeting key and attributes.
func (p *Provider) detail(flag string, flat of.FlattenedContext) (sdkgo.Detail, of.ProviderResolutionDetail) {
	user, _ := flat[of.TargetingKey].(string)
	attrs := make(map[string]any, len(flat))
	for k, v := range flat {
		if k != of.TargetingKey {
			attrs[k] = v
		}
	}
	d := p.client.Detail(flag, user, attrs)
	res := of.ProviderResolutionDetail{Reason: reason(d.Reason), FlagMetadata: of.FlagMetadata{"switchyard_reason": string(d.Reason)}}
	if d.Reason == eval.ReasonFlagNotFound {
		res.ResolutionError = of.NewFlagNotFoundResolutionError("flag " + flag + " not found")
		d.Value = nil // the caller's default applies, not the evaluator's false
	}
	return d, res
}

// reason maps Switchyard's reasons to OpenFeature's.
func reason(r eval.Reason) of.Reason {
	switch r {
	case eval.ReasonRuleMatch:
		return of.TargetingMatchReason
	case eval.ReasonRolloutIn, eval.ReasonRolloutOut, eval.ReasonVariant:
		return of.SplitReason // assigned by the deterministic hash
	case eval.ReasonDisabled, eval.ReasonPrerequisiteFailed:
		return of.DisabledReason
	case eval.ReasonDefault:
		return of.DefaultReason
	case eval.ReasonFlagNotFound:
		return of.ErrorReason
	}
	return of.UnknownReason
}

func mismatch(res of.ProviderResolutionDetail, want string) of.ProviderResolutionDetail {
	if res.ResolutionError == (of.ResolutionError{}) {
		res.ResolutionError = of.NewTypeMismatchResolutionError("the flag's value is not a " + want)
		res.Reason = of.ErrorReason
	}
	return res
}

// BooleanEvaluation evaluates a boolean flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, def bool, flat of.FlattenedContext) of.BoolResolutionDetail {
	d, res := p.detail(flag, flat)
	if v, ok := d.Value.(bool); ok {
		return of.BoolResolutionDetail{Value: v, ProviderResolutionDetail: res}
	}
	return of.BoolResolutionDetail{Value: def, ProviderResolutionDetail: mismatch(res, "boolean")}
}

// StringEvaluation evaluates a string flag.
func (p *Provider) StringEvaluation(_ context.Context, flag string, def string, flat of.FlattenedContext) of.StringResolutionDetail {
	d, res := p.detail(flag, flat)
	if v, ok := d.Value.(string); ok {
		return of.StringResolutionDetail{Value: v, ProviderResolutionDetail: res}
	}
	return of.StringResolutionDetail{Value: def, ProviderResolutionDetail: mismatch(res, "string")}
}

// FloatEvaluation evaluates a numeric flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, def float64, flat of.FlattenedContext) of.FloatResolutionDetail {
	d, res := p.detail(flag, flat)
	if v, ok := d.Value.(float64); ok {
		return of.FloatResolutionDetail{Value: v, ProviderResolutionDetail: res}
	}
	return of.FloatResolutionDetail{Value: def, ProviderResolutionDetail: mismatch(res, "number")}
}

// IntEvaluation evaluates an integer flag.
func (p *Provider) IntEvaluation(_ context.Context, flag string, def int64, flat of.FlattenedContext) of.IntResolutionDetail {
	d, res := p.detail(flag, flat)
	if v, ok := sdkgo.AsInt(d.Value); ok {
		return of.IntResolutionDetail{Value: v, ProviderResolutionDetail: res}
	}
	return of.IntResolutionDetail{Value: def, ProviderResolutionDetail: mismatch(res, "whole number")}
}

// ObjectEvaluation evaluates a JSON flag.
func (p *Provider) ObjectEvaluation(_ context.Context, flag string, def any, flat of.FlattenedContext) of.InterfaceResolutionDetail {
	d, res := p.detail(flag, flat)
	if d.Value != nil {
		return of.InterfaceResolutionDetail{Value: d.Value, ProviderResolutionDetail: res}
	}
	return of.InterfaceResolutionDetail{Value: def, ProviderResolutionDetail: mismatch(res, "JSON value")}
}
