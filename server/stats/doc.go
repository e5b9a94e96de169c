// Package stats holds the experiment maths of Switchyard: conversion rates,
// uplift, and the pooled two-proportion z-test with its two-sided p-value
// (docs/reference/measurement.md, Experiment results). It is pure: no I/O, no
// clock, no errors.
package stats
