package store

// NewProvider exposes newProvider to the black-box tests, which migrate down.
var NewProvider = newProvider
