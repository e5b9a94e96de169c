module github.com/switchyard/switchyard/bench/evalpeers

go 1.26.8

replace github.com/switchyard/switchyard => ../..

require (
	github.com/launchdarkly/go-sdk-common/v3 v3.4.0
	github.com/launchdarkly/go-server-sdk-evaluation/v3 v3.0.1
	github.com/switchyard/switchyard v0.0.0
)

require (
	github.com/josharian/intern v1.0.0 // indirect
	github.com/launchdarkly/go-jsonstream/v3 v3.1.0 // indirect
	github.com/launchdarkly/go-semver v1.0.3 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)
