// Package config reads Switchyard's configuration from environment variables.
//
// Every variable of the configuration table (docs/reference/server.md,
// Configuration) is read, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_NAME,
// WORKSPACE_NAME, HOST and REDIS_CHANNEL included. [FromEnv] applies the
// defaults and parses typed values; [Config.Validate] applies the start-up
// policy (refuse the development session secret over secure cookies, and so
// on). The caller passes a lookup function such as [os.LookupEnv], so tests use
// a map instead of the process environment.
//
// A variable set to the empty string counts as unset, except REDIS_URL, where
// the empty string selects the in-process message bus.
package config
