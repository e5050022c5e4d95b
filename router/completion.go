package router

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// CompletionFunc proposes values for one argument of a prompt or resource
// template, given what the user has typed so far and the values of the
// other arguments.
type CompletionFunc func(ctx context.Context, prefix string, context map[string]string) ([]string, error)

type completionKey struct{ refType, ref, arg string }

// maxCompletionValues is the MCP limit on values in one completion result.
const maxCompletionValues = 100

// AddPromptCompletion registers completions for argument arg of prompt.
func (r *Router) AddPromptCompletion(prompt, arg string, f CompletionFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.completer[completionKey{"ref/prompt", prompt, arg}] = f
}

// AddResourceCompletion registers completions for variable arg of the
// resource template uriTemplate.
func (r *Router) AddResourceCompletion(uriTemplate, arg string, f CompletionFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.completer[completionKey{"ref/resource", uriTemplate, arg}] = f
}

// complete answers completion/complete. Arguments nobody registered a
// completer for get an empty list, which MCP defines as "no suggestions";
// so do those of a prompt or resource template outside the caller's
// allowlist, as if it did not exist.
func (r *Router) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	if p == nil || p.Ref == nil {
		return res, nil
	}
	ref := p.Ref.Name
	caller := agentsmcp.PrincipalFrom(ctx)
	allowed := func(name string) bool { return mayUsePrompt(caller, name) }
	if p.Ref.Type == "ref/resource" {
		ref = p.Ref.URI
		allowed = func(uri string) bool { return mayUseResource(caller, uri) }
	}
	if !allowed(ref) {
		r.recordDenied(ctx, "completion/complete", ref)
		return res, nil
	}
	r.mu.RLock()
	f := r.completer[completionKey{p.Ref.Type, ref, p.Argument.Name}]
	r.mu.RUnlock()
	if f == nil {
		return res, nil
	}
	var args map[string]string
	if p.Context != nil {
		args = p.Context.Arguments
	}
	values, err := f(ctx, p.Argument.Value, args)
	if err != nil {
		return nil, err
	}
	var matched []string
	for _, v := range values {
		if strings.HasPrefix(v, p.Argument.Value) {
			matched = append(matched, v)
		}
	}
	res.Completion.Total = len(matched)
	if len(matched) > maxCompletionValues {
		matched = matched[:maxCompletionValues]
		res.Completion.HasMore = true
	}
	if matched != nil {
		res.Completion.Values = matched
	}
	return res, nil
}
