package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agents-mcp/agents-mcp/httptools"
)

// HTTPSource is one entry of the http_tools section: HTTP endpoints or an
// OpenAPI document whose operations become tools (package httptools owns
// the definition and its validation).
type HTTPSource = httptools.Source

// fileHTTPSrc is an http_tools entry as written: the timeout is a
// string so that a bad one is reported with its key, and header values
// and the exchange's client secret may hold ${VAR} references.
type fileHTTPSrc struct {
	Name             string               `yaml:"name"`
	BaseURL          string               `yaml:"base_url"`
	Headers          map[string]string    `yaml:"headers"`
	Timeout          string               `yaml:"timeout"`
	MaxResponseBytes int64                `yaml:"max_response_bytes"`
	Endpoints        []httptools.Endpoint `yaml:"endpoints"`
	OpenAPI          string               `yaml:"openapi"`
	Include          []string             `yaml:"include"`
	Exclude          []string             `yaml:"exclude"`
	AllowRemoteRefs  bool                 `yaml:"allow_remote_refs"`
	Delegation       string               `yaml:"delegation"`
	Exchange         *fileExchange        `yaml:"exchange"`
}

// fileExchange is the exchange settings of an http_tools entry as
// written: the client secret may be a ${VAR} reference (and should be).
type fileExchange struct {
	TokenEndpoint string   `yaml:"token_endpoint"`
	ClientID      string   `yaml:"client_id"`
	ClientSecret  string   `yaml:"client_secret"`
	Audience      string   `yaml:"audience"`
	Resource      string   `yaml:"resource"`
	Scopes        []string `yaml:"scopes"`
}

// resolve turns a file entry into a source: ${VAR} references in header
// values and the exchange's client secret are expanded through getenv, the timeout is parsed, and a
// relative openapi path is taken from the config file's directory (dir).
func (fs fileHTTPSrc) resolve(field, dir string, getenv func(string) string) (HTTPSource, []error) {
	var errs []error
	s := HTTPSource{
		Name:             strings.TrimSpace(fs.Name),
		BaseURL:          strings.TrimSpace(fs.BaseURL),
		MaxResponseBytes: fs.MaxResponseBytes,
		Endpoints:        fs.Endpoints,
		OpenAPI:          strings.TrimSpace(fs.OpenAPI),
		Include:          fs.Include,
		Exclude:          fs.Exclude,
		AllowRemoteRefs:  fs.AllowRemoteRefs,
		Delegation:       strings.ToLower(strings.TrimSpace(fs.Delegation)),
	}
	if e := fs.Exchange; e != nil {
		secret, err := expandEnv(e.ClientSecret, getenv)
		if err != nil {
			errs = append(errs, fieldError(field+".exchange.client_secret", "%v", err))
		}
		s.Exchange = &httptools.Exchange{
			TokenEndpoint: strings.TrimSpace(e.TokenEndpoint),
			ClientID:      strings.TrimSpace(e.ClientID),
			ClientSecret:  secret,
			Audience:      strings.TrimSpace(e.Audience),
			Resource:      strings.TrimSpace(e.Resource),
			Scopes:        e.Scopes,
		}
	}
	if fs.Headers != nil {
		s.Headers = make(map[string]string, len(fs.Headers))
		for _, k := range sortedKeys(fs.Headers) {
			v, err := expandEnv(fs.Headers[k], getenv)
			if err != nil {
				errs = append(errs, fieldError(fmt.Sprintf("%s.headers.%s", field, k), "%v", err))
			}
			s.Headers[k] = v
		}
	}
	if t := strings.TrimSpace(fs.Timeout); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			errs = append(errs, fieldError(field+".timeout", "invalid duration %q", fs.Timeout))
		} else {
			s.Timeout = d
		}
	}
	if fs.MaxResponseBytes < 0 {
		errs = append(errs, fieldError(field+".max_response_bytes", "must not be negative"))
	}
	if s.OpenAPI != "" && !strings.HasPrefix(s.OpenAPI, "http://") && !strings.HasPrefix(s.OpenAPI, "https://") &&
		!filepath.IsAbs(s.OpenAPI) && dir != "" {
		s.OpenAPI = filepath.Join(dir, s.OpenAPI)
	}
	return s.WithDefaults(), errs
}

// validateHTTPSources checks every http_tools entry and that no name is
// used twice, nor by an upstream: both name tool providers.
func (c *Config) validateHTTPSources() []error {
	var errs []error
	upstreams := map[string]bool{}
	for _, u := range c.Upstreams {
		upstreams[u.Name] = true
	}
	seen := map[string]int{}
	for i := range c.HTTPTools {
		s := &c.HTTPTools[i]
		prefix := fmt.Sprintf("http_tools[%d]", i)
		for _, p := range s.Problems() {
			errs = append(errs, fieldError(prefix+"."+p.Field, "%s", p.Message))
		}
		if j, dup := seen[s.Name]; dup && s.Name != "" {
			errs = append(errs, fieldError(prefix+".name", "%q is already used by http_tools[%d]", s.Name, j))
		} else {
			seen[s.Name] = i
		}
		if upstreams[s.Name] {
			errs = append(errs, fieldError(prefix+".name", "%q is already the name of an upstream", s.Name))
		}
	}
	return errs
}

// describeHTTPSource is one source for the startup log, header values
// redacted.
func describeHTTPSource(s HTTPSource) string {
	r := s.Redacted()
	var b strings.Builder
	fmt.Fprintf(&b, "name=%s", r.Name)
	if r.OpenAPI != "" {
		fmt.Fprintf(&b, " openapi=%s", r.OpenAPI)
	} else {
		fmt.Fprintf(&b, " endpoints=%d", len(r.Endpoints))
	}
	if r.BaseURL != "" {
		fmt.Fprintf(&b, " base_url=%s", r.BaseURL)
	}
	if len(r.Headers) > 0 {
		fmt.Fprintf(&b, " headers=%s", strings.Join(sortedKeys(r.Headers), ","))
	}
	if r.Delegation != "" {
		fmt.Fprintf(&b, " delegation=%s", r.Delegation)
	}
	if r.Exchange != nil {
		fmt.Fprintf(&b, " exchange.token_endpoint=%s exchange.client_id=%s exchange.audience=%s", r.Exchange.TokenEndpoint, r.Exchange.ClientID, r.Exchange.Audience)
	}
	fmt.Fprintf(&b, " timeout=%s max_response_bytes=%d", r.Timeout, r.MaxResponseBytes)
	return b.String()
}
