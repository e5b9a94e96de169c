package config_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/config"
)

// lookup returns an os.LookupEnv stand-in backed by env.
func lookup(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

// defaults is the Config that an empty environment yields.
func defaults() config.Config {
	return config.Config{
		SessionSecret:          config.DevSessionSecret,
		DatabaseURL:            "postgres://switchyard:switchyard@127.0.0.1:5432/switchyard?sslmode=disable",
		RedisURL:               "redis://127.0.0.1:6379/0",
		RedisChannel:           "switchyard:changes",
		PostgresUser:           "switchyard",
		PostgresPassword:       "switchyard",
		PostgresDB:             "switchyard",
		CookieSecure:           true,
		SDKKey:                 "",
		PublicDir:              "public",
		Host:                   "",
		Port:                   3000,
		PublicURL:              "http://localhost:3000",
		DBMaxConnections:       10,
		MeasureReadConnections: 3,
		MeasureReadTimeout:     30 * time.Second,
		LogLevel:               slog.LevelInfo,
		AdminEmail:             "",
		AdminPassword:          "",
		AdminName:              "Admin",
		WorkspaceName:          "Switchyard",
		RetentionDays:          90,
		IngestMaxUnfolded:      25000,

		OFREPExposureMemory: 1_000_000,
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want func(*config.Config)
	}{
		{name: "defaults", env: nil, want: func(*config.Config) {}},
		{
			name: "empty values count as unset",
			env: map[string]string{
				"SESSION_SECRET": "", "DATABASE_URL": "", "POSTGRES_USER": "", "POSTGRES_PASSWORD": "",
				"POSTGRES_DB": "", "COOKIE_SECURE": "", "SDK_KEY": "", "PUBLIC_DIR": "", "HOST": "",
				"PORT": "", "DB_MAX_CONNECTIONS": "", "RUST_LOG": "", "ADMIN_EMAIL": "",
				"ADMIN_PASSWORD": "", "ADMIN_NAME": "", "WORKSPACE_NAME": "", "REDIS_CHANNEL": "",
			},
			want: func(*config.Config) {},
		},
		{
			name: "REDIS_URL empty selects the in-process bus",
			env:  map[string]string{"REDIS_URL": ""},
			want: func(c *config.Config) { c.RedisURL = "" },
		},
		{
			name: "REDIS_URL override",
			env:  map[string]string{"REDIS_URL": "redis://cache:6380/2"},
			want: func(c *config.Config) { c.RedisURL = "redis://cache:6380/2" },
		},
		{
			name: "REDIS_CHANNEL override",
			env:  map[string]string{"REDIS_CHANNEL": "staging:switchyard"},
			want: func(c *config.Config) { c.RedisChannel = "staging:switchyard" },
		},
		{
			name: "SESSION_SECRET override",
			env:  map[string]string{"SESSION_SECRET": "s3cret"},
			want: func(c *config.Config) { c.SessionSecret = "s3cret" },
		},
		{
			name: "DATABASE_URL override wins over POSTGRES_*",
			env: map[string]string{
				"DATABASE_URL":  "postgres://u:p@db:5432/x",
				"POSTGRES_USER": "other",
			},
			want: func(c *config.Config) {
				c.DatabaseURL = "postgres://u:p@db:5432/x"
				c.PostgresUser = "other"
			},
		},
		{
			name: "DATABASE_URL built from POSTGRES_*",
			env:  map[string]string{"POSTGRES_USER": "alice", "POSTGRES_PASSWORD": "pw", "POSTGRES_DB": "flags"},
			want: func(c *config.Config) {
				c.PostgresUser, c.PostgresPassword, c.PostgresDB = "alice", "pw", "flags"
				c.DatabaseURL = "postgres://alice:pw@127.0.0.1:5432/flags?sslmode=disable"
			},
		},
		{
			name: "POSTGRES_PASSWORD is escaped in the built URL",
			env:  map[string]string{"POSTGRES_PASSWORD": "p@ss/w:rd"},
			want: func(c *config.Config) {
				c.PostgresPassword = "p@ss/w:rd"
				c.DatabaseURL = "postgres://switchyard:p%40ss%2Fw%3Ard@127.0.0.1:5432/switchyard?sslmode=disable"
			},
		},
		{
			name: "COOKIE_SECURE false",
			env:  map[string]string{"COOKIE_SECURE": "false"},
			want: func(c *config.Config) { c.CookieSecure = false },
		},
		{
			name: "COOKIE_SECURE 0",
			env:  map[string]string{"COOKIE_SECURE": "0"},
			want: func(c *config.Config) { c.CookieSecure = false },
		},
		{
			name: "COOKIE_SECURE 1",
			env:  map[string]string{"COOKIE_SECURE": "1"},
			want: func(*config.Config) {},
		},
		{
			name: "COOKIE_SECURE TRUE",
			env:  map[string]string{"COOKIE_SECURE": "TRUE"},
			want: func(*config.Config) {},
		},
		{
			name: "SDK_KEY",
			env:  map[string]string{"SDK_KEY": "sdk-extra"},
			want: func(c *config.Config) { c.SDKKey = "sdk-extra" },
		},
		{
			name: "PUBLIC_DIR",
			env:  map[string]string{"PUBLIC_DIR": "/srv/dashboard"},
			want: func(c *config.Config) { c.PublicDir = "/srv/dashboard" },
		},
		{
			name: "HOST and PORT 0 for tests",
			env:  map[string]string{"HOST": "127.0.0.1", "PORT": "0"},
			want: func(c *config.Config) { c.Host, c.Port, c.PublicURL = "127.0.0.1", 0, "http://localhost:0" },
		},
		{
			name: "PORT 65535",
			env:  map[string]string{"PORT": "65535"},
			want: func(c *config.Config) { c.Port, c.PublicURL = 65535, "http://localhost:65535" },
		},
		{
			name: "PUBLIC_URL without its trailing slash",
			env:  map[string]string{"PUBLIC_URL": "https://flags.example.com/"},
			want: func(c *config.Config) { c.PublicURL = "https://flags.example.com" },
		},
		{
			name: "DB_MAX_CONNECTIONS",
			env:  map[string]string{"DB_MAX_CONNECTIONS": "1"},
			want: func(c *config.Config) { c.DBMaxConnections = 1 },
		},
		{
			name: "MEASURE_READ_CONNECTIONS and MEASURE_READ_TIMEOUT",
			env:  map[string]string{"MEASURE_READ_CONNECTIONS": "1", "MEASURE_READ_TIMEOUT": "1m30s"},
			want: func(c *config.Config) { c.MeasureReadConnections, c.MeasureReadTimeout = 1, 90*time.Second },
		},
		{
			name: "RETENTION_DAYS",
			env:  map[string]string{"RETENTION_DAYS": "7"},
			want: func(c *config.Config) { c.RetentionDays = 7 },
		},
		{
			name: "INGEST_MAX_UNFOLDED",
			env:  map[string]string{"INGEST_MAX_UNFOLDED": "100000"},
			want: func(c *config.Config) { c.IngestMaxUnfolded = 100000 },
		},
		{
			name: "INGEST_MAX_UNFOLDED off",
			env:  map[string]string{"INGEST_MAX_UNFOLDED": "0"},
			want: func(c *config.Config) { c.IngestMaxUnfolded = 0 },
		},
		{
			name: "OFREP_EXPOSURE_MEMORY",
			env:  map[string]string{"OFREP_EXPOSURE_MEMORY": "5000"},
			want: func(c *config.Config) { c.OFREPExposureMemory = 5000 },
		},
		{
			name: "OFREP_EXPOSURE_MEMORY off",
			env:  map[string]string{"OFREP_EXPOSURE_MEMORY": "0"},
			want: func(c *config.Config) { c.OFREPExposureMemory = 0 },
		},
		{
			name: "RUST_LOG debug",
			env:  map[string]string{"RUST_LOG": "debug"},
			want: func(c *config.Config) { c.LogLevel = slog.LevelDebug },
		},
		{
			name: "admin and workspace",
			env: map[string]string{
				"ADMIN_EMAIL": "a@example.com", "ADMIN_PASSWORD": "pw", "ADMIN_NAME": "Ada",
				"WORKSPACE_NAME": "Acme",
			},
			want: func(c *config.Config) {
				c.AdminEmail, c.AdminPassword, c.AdminName, c.WorkspaceName = "a@example.com", "pw", "Ada", "Acme"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := defaults()
			tt.want(&want)
			got, err := config.FromEnv(lookup(tt.env))
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("FromEnv mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want []string // substrings of the error
	}{
		{name: "COOKIE_SECURE yes", env: map[string]string{"COOKIE_SECURE": "yes"}, want: []string{"COOKIE_SECURE", `"yes"`}},
		{name: "COOKIE_SECURE on", env: map[string]string{"COOKIE_SECURE": "on"}, want: []string{"COOKIE_SECURE"}},
		{name: "PORT not a number", env: map[string]string{"PORT": "http"}, want: []string{"PORT", "not an integer"}},
		{name: "PORT negative", env: map[string]string{"PORT": "-1"}, want: []string{"PORT", `"-1"`}},
		{name: "PORT too large", env: map[string]string{"PORT": "65536"}, want: []string{"PORT", `"65536"`}},
		{name: "DB_MAX_CONNECTIONS zero", env: map[string]string{"DB_MAX_CONNECTIONS": "0"}, want: []string{"DB_MAX_CONNECTIONS", "at least 1"}},
		{name: "DB_MAX_CONNECTIONS negative", env: map[string]string{"DB_MAX_CONNECTIONS": "-5"}, want: []string{"DB_MAX_CONNECTIONS"}},
		{name: "DB_MAX_CONNECTIONS not a number", env: map[string]string{"DB_MAX_CONNECTIONS": "ten"}, want: []string{"DB_MAX_CONNECTIONS"}},
		{name: "DB_MAX_CONNECTIONS overflow", env: map[string]string{"DB_MAX_CONNECTIONS": "3000000000"}, want: []string{"DB_MAX_CONNECTIONS", "out of range"}},
		{name: "MEASURE_READ_CONNECTIONS zero", env: map[string]string{"MEASURE_READ_CONNECTIONS": "0"}, want: []string{"MEASURE_READ_CONNECTIONS", "at least 1"}},
		{name: "MEASURE_READ_TIMEOUT not a duration", env: map[string]string{"MEASURE_READ_TIMEOUT": "30"}, want: []string{"MEASURE_READ_TIMEOUT", "not a duration"}},
		{name: "MEASURE_READ_TIMEOUT zero", env: map[string]string{"MEASURE_READ_TIMEOUT": "0s"}, want: []string{"MEASURE_READ_TIMEOUT", "at least 1ms"}},
		{name: "RETENTION_DAYS zero", env: map[string]string{"RETENTION_DAYS": "0"}, want: []string{"RETENTION_DAYS", `"0"`}},
		{name: "INGEST_MAX_UNFOLDED negative", env: map[string]string{"INGEST_MAX_UNFOLDED": "-1"}, want: []string{"INGEST_MAX_UNFOLDED", `"-1"`}},
		{name: "INGEST_MAX_UNFOLDED not a number", env: map[string]string{"INGEST_MAX_UNFOLDED": "lots"}, want: []string{"INGEST_MAX_UNFOLDED", "not an integer"}},
		{name: "OFREP_EXPOSURE_MEMORY negative", env: map[string]string{"OFREP_EXPOSURE_MEMORY": "-1"}, want: []string{"OFREP_EXPOSURE_MEMORY", `"-1"`}},
		{name: "OFREP_EXPOSURE_MEMORY too large", env: map[string]string{"OFREP_EXPOSURE_MEMORY": "1073741825"}, want: []string{"OFREP_EXPOSURE_MEMORY", `"1073741825"`}},
		{name: "OFREP_EXPOSURE_MEMORY not a number", env: map[string]string{"OFREP_EXPOSURE_MEMORY": "1e6"}, want: []string{"OFREP_EXPOSURE_MEMORY", "not an integer"}},
		{name: "RETENTION_DAYS not a number", env: map[string]string{"RETENTION_DAYS": "ninety"}, want: []string{"RETENTION_DAYS", "not an integer"}},
		{name: "RUST_LOG unknown", env: map[string]string{"RUST_LOG": "verbose"}, want: []string{"RUST_LOG", `"verbose"`}},
		{name: "RUST_LOG module without level", env: map[string]string{"RUST_LOG": "switchyard"}, want: []string{"RUST_LOG"}},
		{
			name: "all errors are reported together",
			env:  map[string]string{"PORT": "x", "COOKIE_SECURE": "maybe", "RUST_LOG": "loud"},
			want: []string{"PORT", "COOKIE_SECURE", "RUST_LOG"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.FromEnv(lookup(tt.env))
			if err == nil {
				t.Fatalf("FromEnv = %+v, want an error", got)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if diff := cmp.Diff(config.Config{}, got); diff != "" {
				t.Errorf("FromEnv returned a partial Config on error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLogLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want slog.Level
	}{
		{"error", slog.LevelError},
		{"warn", slog.LevelWarn},
		{"info", slog.LevelInfo},
		{"debug", slog.LevelDebug},
		{"trace", slog.LevelDebug - 4},
		{"TRACE", config.LevelTrace},
		{"Warn", slog.LevelWarn},
		{" debug ", slog.LevelDebug},
		{"switchyard=debug", slog.LevelDebug},
		{"info,tower_http=warn", slog.LevelWarn},
		{"switchyard=trace,hyper", config.LevelTrace},
		{"warn,switchyard::stream=error", slog.LevelError},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := config.ParseLogLevel(tt.in)
			if err != nil {
				t.Fatalf("ParseLogLevel(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseLogLevel(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	for _, in := range []string{"", "off", "verbose", "switchyard", "a=b,c"} {
		if got, err := config.ParseLogLevel(in); err == nil {
			t.Errorf("ParseLogLevel(%q) = %v, want an error", in, got)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	strong := strings.Repeat("k", 32)
	tests := []struct {
		name         string
		env          map[string]string
		wantWarnings []string // substrings, one per warning, in order
		wantErr      string   // substring; empty means no error
	}{
		{
			name:    "dev secret with secure cookies is refused",
			env:     nil,
			wantErr: "SESSION_SECRET",
		},
		{
			name:         "dev secret over local HTTP warns",
			env:          map[string]string{"COOKIE_SECURE": "false"},
			wantWarnings: []string{"SESSION_SECRET"},
		},
		{
			name: "strong secret",
			env:  map[string]string{"SESSION_SECRET": strong},
		},
		{
			name: "strong secret without secure cookies",
			env:  map[string]string{"SESSION_SECRET": strong, "COOKIE_SECURE": "false"},
		},
		{
			name:    "short secret is refused",
			env:     map[string]string{"SESSION_SECRET": strong[:31]},
			wantErr: "at least 32",
		},
		{
			name:    "short secret is refused over local HTTP too",
			env:     map[string]string{"SESSION_SECRET": "short", "COOKIE_SECURE": "false"},
			wantErr: "at least 32",
		},
		{
			name: "admin email and password",
			env:  map[string]string{"SESSION_SECRET": strong, "ADMIN_EMAIL": "a@example.com", "ADMIN_PASSWORD": "pw"},
		},
		{
			name:         "admin email without password warns",
			env:          map[string]string{"SESSION_SECRET": strong, "ADMIN_EMAIL": "a@example.com"},
			wantWarnings: []string{"ADMIN_PASSWORD"},
		},
		{
			name:         "admin password without email warns",
			env:          map[string]string{"SESSION_SECRET": strong, "ADMIN_PASSWORD": "pw"},
			wantWarnings: []string{"ADMIN_EMAIL"},
		},
		{
			name:         "both warnings",
			env:          map[string]string{"COOKIE_SECURE": "0", "ADMIN_PASSWORD": "pw"},
			wantWarnings: []string{"SESSION_SECRET", "ADMIN_EMAIL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.FromEnv(lookup(tt.env))
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			warnings, err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Validate = %q, nil; want an error mentioning %q", warnings, tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Validate error %q does not mention %q", err, tt.wantErr)
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("Validate warnings = %q, want %d mentioning %q", warnings, len(tt.wantWarnings), tt.wantWarnings)
			}
			for i, w := range tt.wantWarnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to mention %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestDevSessionSecretIsLongEnough(t *testing.T) {
	t.Parallel()
	// The default must still work as a key when COOKIE_SECURE=false.
	if len(config.DevSessionSecret) < config.MinSessionSecretLen {
		t.Errorf("len(DevSessionSecret) = %d, want at least %d", len(config.DevSessionSecret), config.MinSessionSecretLen)
	}
}

func TestAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		port int
		want string
	}{
		{"", 3000, ":3000"},
		{"127.0.0.1", 0, "127.0.0.1:0"},
		{"::1", 8080, "[::1]:8080"},
	}
	for _, tt := range tests {
		c := config.Config{Host: tt.host, Port: tt.port}
		if got := c.Addr(); got != tt.want {
			t.Errorf("Config{Host: %q, Port: %d}.Addr() = %q, want %q", tt.host, tt.port, got, tt.want)
		}
	}
}

func TestUsesRedis(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"REDIS_URL": ""}, false},
		{map[string]string{"REDIS_URL": "redis://127.0.0.1:6379/1"}, true},
	} {
		c, err := config.FromEnv(lookup(tt.env))
		if err != nil {
			t.Fatalf("FromEnv: %v", err)
		}
		if got := c.UsesRedis(); got != tt.want {
			t.Errorf("env %v: UsesRedis() = %v, want %v", tt.env, got, tt.want)
		}
	}
}
