package router

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/internal/panicerr"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
	"github.com/agents-mcp/agents-mcp/router/validation"
)

// MethodValidate is the JSON-RPC method that checks a tool's arguments
// without calling it. It is served on every transport.
const MethodValidate = "tools/validate"

// ValidateParams are the params of tools/validate.
type ValidateParams struct {
	mcp.ParamsBase
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ValidateResult is the result of tools/validate; see
// [agentsmcp.ValidationResult] for the meaning of its fields.
type ValidateResult struct {
	mcp.ResultBase
	CustomResultBase
	agentsmcp.ValidationResult
}

// ValidateToolArguments implements [agentsmcp.ToolValidator] for every
// registered tool, local or remote. Arguments that are not JSON or hold a
// number beyond the bounds of package internal/jsonnum are EINVALID, as
// for a call; a panic of the validator is EINTERNAL (logged).
func (r *Router) ValidateToolArguments(ctx context.Context, tool string, args []byte) (*agentsmcp.ValidationResult, error) {
	e, ok := r.entry(tool)
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "unknown tool %q", tool)
	}
	if !mayUse(ctx, tool) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "tool %q is not allowed for this credential", tool)
	}
	issues, missing, err := validateArguments(e, args)
	if pe, ok := errors.AsType[*panicError](err); ok {
		logPanic(r.logger, pe, "tool", tool, "in", "tools/validate")
		return nil, agentsmcp.Errorf(agentsmcp.EINTERNAL, "validating the arguments of tool %q failed: internal error", tool)
	}
	if err != nil {
		if agentsmcp.ErrorCode(err) == agentsmcp.EINVALID {
			return nil, err
		}
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "tool %q has an input schema that cannot be compiled: %v", tool, err)
	}
	res := &agentsmcp.ValidationResult{Tool: tool, Valid: len(issues) == 0, Errors: issues, Missing: missing}
	if res.Errors == nil {
		res.Errors = []agentsmcp.ValidationIssue{}
	}
	if res.Missing == nil {
		res.Missing = []string{}
	}
	return res, nil
}

func (r *Router) handleValidate(ctx context.Context, _ *mcp.ServerSession, p *ValidateParams) (*ValidateResult, error) {
	if p == nil || p.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `tools/validate: "name" is required`}
	}
	if len(p.Arguments) > 0 && p.Arguments[0] != '{' && string(p.Arguments) != "null" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `tools/validate: "arguments" must be an object`}
	}
	res, err := r.ValidateToolArguments(ctx, p.Name, p.Arguments)
	if err != nil {
		return nil, toJSONRPCError(err)
	}
	return &ValidateResult{ValidationResult: *res}, nil
}

// toJSONRPCError is [rpcerror.FromError], the one place application
// error codes become JSON-RPC error codes.
func toJSONRPCError(err error) *jsonrpc.Error { return rpcerror.FromError(err) }

// validateArguments validates args against e's input schema (see
// [validation.Schema.Validate]); a panic of the validator is a
// [*panicError] (recover.go).
func validateArguments(e *toolEntry, args json.RawMessage) ([]agentsmcp.ValidationIssue, []string, error) {
	issues, missing, err := e.schema.Validate(args)
	if pe, ok := errors.AsType[*validation.PanicError](err); ok {
		return nil, nil, panicerr.New(pe.Value, pe.Stack)
	}
	return issues, missing, err
}
