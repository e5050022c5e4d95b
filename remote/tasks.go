package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// Upstream tasks (ADR 0010, D3). A tools/call that may become a task (its
// context carries an [mcpwire.TaskMode]) declares the Tasks extension to
// an upstream that advertises it. When the upstream answers with a
// CreateTaskResult, the caller is given a sealed handle instead of the
// upstream's task id: [TaskHandlePrefix] and a token, sealed with
// [Options.StateKey] (as the requestState of mrtr.go, under another
// label), that names the upstream, the upstream's task id and a
// digest of the calling principal. [Tasks] serves tasks/get, tasks/update
// and tasks/cancel for those handles by calling the upstream's own methods.
// The gateway stores nothing: the upstream holds the task, and the handle
// binds it to the principal that created it, since behind the gateway every
// caller is the same client to the upstream.

// TaskHandlePrefix starts the ids of upstream tasks as the gateway shows
// them.
const TaskHandlePrefix = "utk_"

// taskHandleLabel separates task handles from the other tokens sealed with
// the same key (see package seal).
const taskHandleLabel = "remote upstream task v1"

// DefaultTaskHandleTTL is how long a task handle stays valid when the
// upstream gives its task no lifetime (ttlMs null), and the least it stays
// valid otherwise. ttlMs may grow while a task runs (the executor of
// agents-mcp does so), so a handle that ended at the first ttlMs could
// lose a task that still runs; a handle that outlives its task costs
// nothing, since the upstream then answers that the task is gone.
const DefaultTaskHandleTTL = 7 * 24 * time.Hour

// maxTaskHandleTTL bounds the life of a task handle, whatever the task's
// ttlMs.
const maxTaskHandleTTL = 10 * 365 * 24 * time.Hour

// The task methods of the Tasks extension, as sent to upstreams.
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// taskHandle is what a handle holds. The payload is readable by the client
// (package seal), which is harmless: it shows the upstream's name and task
// id, which the caller could learn from the upstream anyway, and a digest
// of its own principal.
type taskHandle struct {
	Upstream  string `json:"u"`
	TaskID    string `json:"t"`
	Principal string `json:"p"`
}

// upstreamTaskParams are the params of tasks/* sent to an upstream.
// InputResponses is set, possibly empty, for tasks/update only, where the
// field is required.
type upstreamTaskParams struct {
	mcp.ParamsBase
	TaskID         string                `json:"taskId"`
	InputResponses *mcp.InputResponseMap `json:"inputResponses,omitempty"`
}

// upstreamTaskResult keeps an upstream's tasks/* answer raw: go-sdk has no
// type for it, and the fields are read by [wireTask].
type upstreamTaskResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *upstreamTaskResult) UnmarshalJSON(b []byte) error {
	r.raw = bytes.Clone(b)
	return nil
}

// registerTaskMethods lets c send the Tasks extension's methods.
func registerTaskMethods(c *mcp.Client) {
	for _, m := range []string{methodTasksGet, methodTasksUpdate, methodTasksCancel} {
		// Only a standard method name can be refused, and these are not.
		_ = mcp.AddSendingCustomMethod[*upstreamTaskParams, *upstreamTaskResult](c, m)
	}
}

// wireTask is a Task of the Tasks extension as an upstream sends it: the
// CreateTaskResult of a tools/call, or the DetailedTask of tasks/get.
type wireTask struct {
	ResultType     string                `json:"resultType"`
	TaskID         string                `json:"taskId"`
	Status         mcpwire.MCPTaskStatus `json:"status"`
	StatusMessage  string                `json:"statusMessage"`
	CreatedAt      string                `json:"createdAt"`
	LastUpdatedAt  string                `json:"lastUpdatedAt"`
	TTLMs          *int64                `json:"ttlMs"`
	PollIntervalMs int64                 `json:"pollIntervalMs"`
	InputRequests  mcp.InputRequestMap   `json:"inputRequests"`
	Result         json.RawMessage       `json:"result"`
	Error          *jsonrpc.Error        `json:"error"`
}

// parseWireTime reads a task time; an upstream that sends none, or an
// unreadable one, gets the zero time.
func parseWireTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// ---------------------------------------------------------------------------
// Calling a tool as a task.

// taskCall returns the capture of a tools/call that may become a task, or
// nil when the call stays plain: the caller did not ask for a task (no
// TaskMode) or the upstream does not advertise the extension (under
// 2026-07-28 or later). The extension is declared to the upstream, beside
// the caller's relayed capabilities, by [rounds.call], for a call whose
// context carries a capture: it is the caller that answers the task's
// questions, through tasks/get and tasks/update.
func (u *upstream) taskCall(ctx context.Context, cs *mcp.ClientSession) *taskCapture {
	if mcpwire.TaskModeFrom(ctx) == nil || !offersTasks(cs) {
		return nil
	}
	return &taskCapture{}
}

// offersTasks reports whether cs is with an upstream of 2026-07-28 or later
// that advertises the Tasks extension.
func offersTasks(cs *mcp.ClientSession) bool {
	init := cs.InitializeResult()
	if init == nil || !mcpwire.Revision(init.ProtocolVersion).Sessionless() || init.Capabilities == nil {
		return false
	}
	_, ok := init.Capabilities.Extensions[mcpwire.TasksExtension]
	return ok
}

// withTasksExtension returns client capabilities (a map or a struct, as
// put in a _meta) with the Tasks extension added.
func withTasksExtension(caps any) map[string]any {
	out := map[string]any{}
	if caps != nil {
		if b, err := json.Marshal(caps); err == nil {
			_ = json.Unmarshal(b, &out)
		}
		if out == nil {
			out = map[string]any{}
		}
	}
	exts, _ := out["extensions"].(map[string]any)
	exts = maps.Clone(exts)
	if exts == nil {
		exts = map[string]any{}
	}
	exts[mcpwire.TasksExtension] = map[string]any{}
	out["extensions"] = exts
	return out
}

// taskCreated finishes a call that declared the Tasks extension: when the
// upstream answered with a CreateTaskResult, it records a handle for the
// task in ctx's TaskMode (the router then answers with the task) and
// returns an empty result in place of the one go-sdk decoded, which lost
// the task's fields. Other answers are returned as a plain call returns
// them.
func (u *upstream) taskCreated(ctx context.Context, capture *taskCapture, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	raw := capture.result()
	var w wireTask
	if raw == nil || json.Unmarshal(raw, &w) != nil || w.ResultType != resultTypeTask {
		if raw == nil && isTaskResult(res) {
			// Not expected: the connection did not see the answer.
			return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q answered with a task whose id was lost on the way", u.cfg.Name)
		}
		u.exposeResourceURIs(res)
		return res, nil
	}
	if w.TaskID == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q answered with a task without a taskId", u.cfg.Name)
	}
	id, err := u.pool.sealTask(ctx, u.cfg.Name, &w)
	if err != nil {
		return nil, err
	}
	mcpwire.TaskModeFrom(ctx).Created(id)
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
}

// resultTypeTask is the resultType of a CreateTaskResult.
const resultTypeTask = "task"

// isTaskResult reports whether go-sdk decoded res from a CreateTaskResult:
// it keeps the resultType, unexported, and sends it again when encoding.
func isTaskResult(res *mcp.CallToolResult) bool {
	if res == nil {
		return false
	}
	b, err := json.Marshal(res)
	if err != nil {
		return false
	}
	var rt struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(b, &rt) == nil && rt.ResultType == resultTypeTask
}

// sealTask makes the handle of upstream's task w for the principal of ctx.
// It expires Options.TaskHandleTTL after the task was created, or at the
// end of the task's ttlMs if that is later (at most maxTaskHandleTTL).
func (p *Pool) sealTask(ctx context.Context, upstream string, w *wireTask) (string, error) {
	created := parseWireTime(w.CreatedAt)
	now := time.Now()
	if created.IsZero() || created.After(now) {
		created = now
	}
	life := p.opts.TaskHandleTTL
	if w.TTLMs != nil && *w.TTLMs > life.Milliseconds() {
		// Bounded, so that a huge ttlMs cannot overflow the expiry.
		life = time.Duration(min(*w.TTLMs, maxTaskHandleTTL.Milliseconds())) * time.Millisecond
	}
	token, err := p.states.Seal(taskHandleLabel, taskHandle{
		Upstream: upstream, TaskID: w.TaskID, Principal: seal.Digest(agentsmcp.PrincipalIDFrom(ctx)),
	}, created.Add(life).Sub(now))
	if err != nil {
		return "", agentsmcp.Errorf(agentsmcp.EINTERNAL, "seal the handle of a task of upstream %q: %v", upstream, err)
	}
	return TaskHandlePrefix + token, nil
}

// ---------------------------------------------------------------------------
// Capturing the CreateTaskResult. go-sdk's client decodes a tools/call
// answer into a CallToolResult, which drops taskId and the other fields of
// a CreateTaskResult. A call that may create a task carries a taskCapture
// in its context; the transports see the context of each message sent
// (go-sdk writes a request with its call's context), note the request's
// JSON-RPC id, and keep the raw result of the response with that id.

// taskCapture receives the raw result of one tools/call.
type taskCapture struct {
	mu  sync.Mutex
	raw json.RawMessage
	// ended is set once the call returned: an answer that never came
	// (the call was cancelled) is no longer waited for.
	ended bool
}

// end marks the call as returned.
func (c *taskCapture) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
}

func (c *taskCapture) hasEnded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

func (c *taskCapture) set(raw json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw = bytes.Clone(raw)
}

func (c *taskCapture) result() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

type taskCaptureKey struct{}

// withTaskCapture returns ctx carrying c; a nil c leaves ctx as it is.
func withTaskCapture(ctx context.Context, c *taskCapture) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, taskCaptureKey{}, c)
}

func taskCaptureFrom(ctx context.Context) *taskCapture {
	c, _ := ctx.Value(taskCaptureKey{}).(*taskCapture)
	return c
}

// taskCaptureTransport captures for connections that carry whole JSON-RPC
// messages (stdio, legacy SSE).
type taskCaptureTransport struct{ inner mcp.Transport }

func (t taskCaptureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskCaptureConn{Connection: conn, pending: map[jsonrpc.ID]*taskCapture{}}, nil
}

type taskCaptureConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]*taskCapture
}

// prunePendingAt is the number of captures waiting on one connection
// beyond which those of calls that returned without their answer
// (cancelled) are dropped.
const prunePendingAt = 64

func (c *taskCaptureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if capture := taskCaptureFrom(ctx); capture != nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/call" {
			c.mu.Lock()
			if len(c.pending) >= prunePendingAt {
				maps.DeleteFunc(c.pending, func(_ jsonrpc.ID, p *taskCapture) bool { return p.hasEnded() })
			}
			c.pending[req.ID] = capture
			c.mu.Unlock()
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskCaptureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		capture := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if capture != nil && resp.Error == nil {
			capture.set(resp.Result)
		}
	}
	return msg, err
}

// upstreamTaskKey is the context key of the upstream task id that a
// tasks/* request is about.
type upstreamTaskKey struct{}

// taskRoundTripper does, for streamable HTTP, what taskCaptureConn does for
// the other transports (go-sdk needs its streamable connection unwrapped),
// in the response of the POST that carries the call. It also sets Mcp-Name
// on tasks/* requests to the upstream's task id, which the Tasks extension
// requires and go-sdk's client sets only for tools/call, resources/read and
// prompts/get.
type taskRoundTripper struct{ base http.RoundTripper }

func (t taskRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if id, ok := ctx.Value(upstreamTaskKey{}).(string); ok && strings.HasPrefix(req.Header.Get("Mcp-Method"), "tasks/") {
		req = req.Clone(ctx)
		req.Header.Set("Mcp-Name", id)
	}
	capture := taskCaptureFrom(ctx)
	if capture == nil || req.Method != http.MethodPost || req.GetBody == nil {
		return t.base.RoundTrip(req)
	}
	callID, ok := toolsCallID(req)
	resp, err := t.base.RoundTrip(req)
	if err != nil || !ok {
		return resp, err
	}
	resp.Body = &captureBody{
		ReadCloser: resp.Body, capture: capture, id: callID,
		sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
	}
	return resp, nil
}

// toolsCallID is the JSON-RPC id of the tools/call that req's body holds.
func toolsCallID(req *http.Request) (jsonrpc.ID, bool) {
	body, err := req.GetBody()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxCapture))
	if err != nil {
		return jsonrpc.ID{}, false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.IsCall() || r.Method != "tools/call" {
		return jsonrpc.ID{}, false
	}
	return r.ID, true
}

// maxCapture bounds what a captureBody buffers: an answer larger than this
// is not captured (and a CreateTaskResult is small).
const maxCapture = 1 << 20

// captureBody reads the response of a tools/call POST for the answer with
// id: a JSON body, decoded at its end, or an event stream, decoded event by
// event, since the stream may carry notifications before the answer.
type captureBody struct {
	io.ReadCloser
	capture *taskCapture
	id      jsonrpc.ID
	sse     bool
	buf     []byte
	done    bool
}

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.done {
		return n, err
	}
	b.buf = append(b.buf, p[:n]...)
	if b.sse {
		b.events()
	} else if err == io.EOF {
		b.take(b.buf)
	}
	if len(b.buf) > maxCapture {
		b.done, b.buf = true, nil
	}
	return n, err
}

// events decodes each complete event in the buffer.
func (b *captureBody) events() {
	for !b.done {
		i, sep := bytes.Index(b.buf, []byte("\n\n")), 2
		if j := bytes.Index(b.buf, []byte("\r\n\r\n")); j >= 0 && (i < 0 || j < i) {
			i, sep = j, 4
		}
		if i < 0 {
			return
		}
		var data [][]byte
		for line := range bytes.Lines(b.buf[:i]) {
			line = bytes.TrimRight(line, "\r\n")
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(v, []byte(" ")))
			}
		}
		b.buf = b.buf[i+sep:]
		if len(data) > 0 {
			b.take(bytes.Join(data, []byte("\n")))
		}
	}
}

// take keeps data's result if data is the answer with b's id.
func (b *captureBody) take(data []byte) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == b.id {
		b.done, b.buf = true, nil
		if resp.Error == nil {
			b.capture.set(resp.Result)
		}
	}
}

// ---------------------------------------------------------------------------
// The task backend.

// Tasks serves tasks/get, tasks/update and tasks/cancel for the handles of
// upstream tasks ([TaskHandlePrefix]), as an [mcpwire.TaskBackend]. Each
// method opens the handle, checks that the caller is the principal that
// created the task, and calls the upstream's own method with the
// upstream's task id; answers show the handle as the task id. A handle that
// is forged, changed, expired, or held by another principal, and a task whose
// upstream was removed or no longer knows it, are all answered as an
// unknown task (ENOTFOUND), so that whether a task exists is never
// revealed to another principal.
type Tasks struct{ pool *Pool }

// Tasks returns the task backend of the pool's upstream tasks.
func (p *Pool) Tasks() *Tasks { return &Tasks{pool: p} }

// Owns implements mcpwire.TaskBackend.
func (t *Tasks) Owns(id string) bool { return strings.HasPrefix(id, TaskHandlePrefix) }

// GetTask implements mcpwire.TaskBackend. The upstream's ttlMs is shown
// capped at the handle's expiry, and as the time until it when the upstream
// gives none, since the task cannot be reached through the gateway after.
func (t *Tasks) GetTask(ctx context.Context, id string) (*mcpwire.MCPTask, error) {
	u, h, expires, err := t.open(ctx, id)
	if err != nil {
		return nil, err
	}
	raw, err := u.taskRequest(ctx, id, h, methodTasksGet, nil)
	if err != nil {
		return nil, err
	}
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q answered tasks/get with a task that does not decode: %v", u.cfg.Name, err)
	}
	return u.taskView(id, &w, expires)
}

// UpdateTask implements mcpwire.TaskBackend.
func (t *Tasks) UpdateTask(ctx context.Context, id string, responses mcp.InputResponseMap) error {
	u, h, _, err := t.open(ctx, id)
	if err != nil {
		return err
	}
	if responses == nil {
		responses = mcp.InputResponseMap{}
	}
	_, err = u.taskRequest(ctx, id, h, methodTasksUpdate, &responses)
	return err
}

// CancelTask implements mcpwire.TaskBackend.
func (t *Tasks) CancelTask(ctx context.Context, id string) error {
	u, h, _, err := t.open(ctx, id)
	if err != nil {
		return err
	}
	_, err = u.taskRequest(ctx, id, h, methodTasksCancel, nil)
	return err
}

// taskNotFound is the error of every handle the caller may not use.
func taskNotFound(id string) error {
	return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
}

// open checks handle id for the caller of ctx and returns its upstream.
func (t *Tasks) open(ctx context.Context, id string) (*upstream, taskHandle, time.Time, error) {
	var h taskHandle
	token, ok := strings.CutPrefix(id, TaskHandlePrefix)
	if !ok {
		return nil, h, time.Time{}, taskNotFound(id)
	}
	expires, err := t.pool.states.Open(taskHandleLabel, token, &h)
	if err != nil || h.Principal != seal.Digest(agentsmcp.PrincipalIDFrom(ctx)) {
		return nil, h, time.Time{}, taskNotFound(id)
	}
	u, ok := t.pool.get(h.Upstream)
	if !ok {
		return nil, h, time.Time{}, taskNotFound(id)
	}
	return u, h, expires, nil
}

// taskRequest sends one tasks/* request about h's task to the upstream,
// within the upstream's timeout, declaring the Tasks extension and what the
// pool's client can relay, and returns the raw answer. The upstream's
// -32602 (it does not know the task) is ENOTFOUND for handle id; other
// failures are EUNAVAILABLE.
func (u *upstream) taskRequest(ctx context.Context, id string, h taskHandle, method string, responses *mcp.InputResponseMap) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, u.cfg.Timeout, errCallTimeout)
	defer cancel()
	cs, err := u.waitSession(ctx)
	if err != nil {
		return nil, err
	}
	params := &upstreamTaskParams{TaskID: h.TaskID, InputResponses: responses}
	params.SetMeta(map[string]any{mcp.MetaKeyClientCapabilities: withTasksExtension(&mcp.ClientCapabilities{
		// What the pool's client declares on its own (it has handlers for
		// both), with the extension: an upstream sends a client only the
		// requests it declared.
		Sampling:    &mcp.SamplingCapabilities{},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
	})})
	res, err := mcp.CallCustomMethod[*upstreamTaskParams, *upstreamTaskResult](context.WithValue(ctx, upstreamTaskKey{}, h.TaskID), cs, method, params)
	if err != nil {
		if rpcErr := upstreamError(err); rpcErr != nil {
			if rpcErr.Code == jsonrpc.CodeInvalidParams {
				return nil, taskNotFound(id)
			}
			return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q answered %s with error %d: %s", u.cfg.Name, method, rpcErr.Code, storedform.TruncateUTF8(rpcErr.Message, 500))
		}
		if ctx.Err() != nil {
			return nil, u.contextError(ctx, "waiting for the answer to "+method)
		}
		signal(u.probe)
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q: %s", u.cfg.Name, u.errorText(err, 500))
	}
	if res == nil || res.raw == nil {
		return json.RawMessage(`{}`), nil
	}
	return res.raw, nil
}

// taskView is the upstream's task w as the caller sees it, under handle id.
func (u *upstream) taskView(id string, w *wireTask, expires time.Time) (*mcpwire.MCPTask, error) {
	switch w.Status {
	case mcpwire.MCPTaskWorking, mcpwire.MCPTaskInputRequired, mcpwire.MCPTaskCompleted, mcpwire.MCPTaskFailed, mcpwire.MCPTaskCancelled:
	default:
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q answered tasks/get with the unknown status %q", u.cfg.Name, w.Status)
	}
	t := &mcpwire.MCPTask{
		ID:             id,
		Status:         w.Status,
		StatusMessage:  w.StatusMessage,
		CreatedAt:      parseWireTime(w.CreatedAt),
		UpdatedAt:      parseWireTime(w.LastUpdatedAt),
		PollIntervalMs: w.PollIntervalMs,
		InputRequests:  w.InputRequests,
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	reachable := expires.Sub(created).Milliseconds()
	if w.TTLMs != nil && *w.TTLMs < reachable {
		reachable = *w.TTLMs
	}
	t.TTLMs = &reachable
	switch w.Status {
	case mcpwire.MCPTaskCompleted:
		if len(w.Result) > 0 && string(w.Result) != "null" {
			var res mcp.CallToolResult
			if err := json.Unmarshal(w.Result, &res); err != nil {
				return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q answered tasks/get with a result that does not decode: %v", u.cfg.Name, err)
			}
			u.exposeResourceURIs(&res)
			t.Result = &res
		}
	case mcpwire.MCPTaskFailed:
		if w.Error != nil {
			t.Error = w.Error
		} else {
			t.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the task failed on upstream %q", u.cfg.Name)}
		}
	}
	return t, nil
}
