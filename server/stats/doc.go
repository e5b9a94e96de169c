// Package stats holds the experiment maths of Switchyard: conversion rates,
// uplift, and the pooled two-proportion z-test with its two-sided p-value
// (docs/reference/measurement.md, Experiment results); the relative lift of a
// per-user metric with a confidence sequence and an always-valid p-value,
// which keep their error rate however often a result is read; and the
// sample-ratio check of an experiment's split. It is pure: no I/O, no clock,
// no errors.
package stats
