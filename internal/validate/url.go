package validate

import (
	"errors"
	"net/url"
)

// HTTPURL accepts only absolute http(s) URLs with a host: the URLs of
// upstream MCP servers and of embedding and LLM endpoints. The error
// completes a sentence that starts with the (redacted) URL.
func HTTPURL(s string) error {
	p, err := url.Parse(s)
	if err != nil {
		return errors.New("is not a valid URL")
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return errors.New("must be an absolute http or https URL")
	}
	if p.Host == "" {
		return errors.New("has no host")
	}
	return nil
}
