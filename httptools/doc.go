// Package httptools turns HTTP APIs into MCP tools: declarative endpoints
// (a method, a path and its parameters) and the operations of OpenAPI 3.0
// and 3.1 documents (Swagger 2.0 ones are upgraded to 3.0 first). Each configured [Source] becomes one
// [agentsmcp.ToolProvider] ([Provider]) whose tools are named
// "<source>__<endpoint>", so that the router's validation, allowlists,
// rate limits, audit and the agents apply to them as to any other tool.
//
// Inputs are exact JSON Schemas: path parameters are required and sent as
// one escaped segment each, so that no value (not even "../x") changes the
// path; query, header and cookie parameters and the JSON body follow their
// declarations. Answers come back as structuredContent (always an object:
// other JSON values are wrapped as {"result": …}) plus their JSON text,
// other answers as text, and error statuses as results with IsError set
// and a short quote of the body. Each call is bounded by the source's
// timeout and response size limit, and every request passes the egress
// policy (package egress) on the client the upstream pool uses.
//
// GET endpoints are annotated readOnlyHint and DELETE endpoints
// destructiveHint, which is what the agents' confirmation gate reads.
//
// An OpenAPI document that cannot be used is a problem of its source
// ([Provider.Status]), never an error that stops the other sources.
// Credentials beyond fixed headers come in through [Authorizer].
package httptools
