package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// The raw relay path: a tools/call to a streamable HTTP upstream
// is posted on the pool's session by this small client rather than by
// go-sdk's, and the upstream's result is handed to the router as the JSON it
// is ([mcpwire.RawToolResult]), never decoded into a CallToolResult and
// encoded again. go-sdk decodes every message with a fresh decoder and a
// 32 KiB buffer, and its client's path decodes a call's answer three times
// (the message, the result, the result's content) and its request once more
// (to check _meta): this path decodes the answer's envelope once.
//
// Everything around the call is the go-sdk path's: the call slot, circuit
// breaker, timeout, progress token rewriting and session retry (call.go).
// The stream of the POST is handled here: progress and log notifications go
// to the same handlers (forward.go), in order, before the answer; sampling,
// elicitation and ping requests are answered with the same handlers, by a
// POST of the answer; when the call's context ends first, the upstream is
// sent notifications/cancelled. What it does not do, and leaves to go-sdk's
// path: upstreams of 2026-07-28 (MRTR), OAuth upstreams, calls that may
// become tasks, and callers that want a decoded result (in-process calls, 2026-07-28 callers).
// A result that is not plainly successful (isError, input_required, a task,
// resource URIs to rewrite) is decoded here and goes on as on that path.
// Unlike go-sdk it does not resume a broken stream (Last-Event-ID): the call
// fails as a transport failure.

// rawEligible reports whether the call goes on the raw path. Not for an
// OAuth upstream: the raw client posts with the upstream's headers only, and
// its sessions (the pool's and each principal's) authenticate through their
// credential transports (oauth.go), which it does not have.
func (u *upstream) rawEligible(ctx context.Context, cs *mcp.ClientSession) bool {
	if u.cfg.Transport != TransportStreamable || u.usesOAuth() || mcpwire.RawToolResultFrom(ctx) == nil || taskCaptureFrom(ctx) != nil || cs.ID() == "" {
		return false
	}
	init := cs.InitializeResult()
	return init != nil && !mcpwire.Revision(init.ProtocolVersion).Sessionless()
}

// callOnce is one tools/call round on cs: on the raw path when it can be.
func (u *upstream) callOnce(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if u.rawEligible(ctx, cs) {
		return u.rawToolCall(ctx, cs, params)
	}
	return cs.CallTool(ctx, params)
}

// rawSeq numbers the raw path's requests. Their ids are strings
// ("agents-mcp-<n>") so that they never collide with go-sdk's numeric ids
// on the same session.
var rawSeq atomic.Uint64

// rawBuffers pools the buffers the raw path reads events into, and
// rawBodies those it reads JSON bodies into; putRaw keeps only the small
// ones, so that one large answer does not stay in memory for good.
var (
	rawBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	rawBodies  = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}
)

// maxPooledRaw is the largest buffer kept in rawBuffers or rawBodies.
const maxPooledRaw = 1 << 20

func putRawBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledRaw {
		rawBuffers.Put(b)
	}
}

var rawReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// rawMessage is a JSON-RPC message as the raw path reads it: the result is
// kept as it came.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// rawHTTPClient is the client of the raw path: the one go-sdk's transport
// uses (the pool's, with the upstream's headers), counting notifications as
// it does, so that settle's counts stay balanced with the handlers' (each
// counted notification read here is handled here).
func (u *upstream) rawHTTPClient() *http.Client {
	u.rawOnce.Do(func() {
		c := u.httpClient()
		u.rawHTTP = &http.Client{
			Transport:     noteCountingRoundTripper{base: c.Transport, read: &u.notesRead},
			CheckRedirect: c.CheckRedirect,
		}
	})
	return u.rawHTTP
}

// rawToolCall posts params as a tools/call on cs's session and reads the
// answer from the response (a JSON body or an event stream).
func (u *upstream) rawToolCall(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	proto := cs.InitializeResult().ProtocolVersion
	id := "agents-mcp-" + strconv.FormatUint(rawSeq.Add(1), 10)
	body, err := rawCallBody(id, params)
	if err != nil {
		return nil, err
	}

	resp, err := u.rawPost(ctx, cs, proto, body, params.Name)
	if err != nil {
		if ctx.Err() != nil {
			u.rawCancel(ctx, cs, proto, id)
			return nil, fmt.Errorf("tools/call: %w", ctx.Err())
		}
		return nil, err
	}
	// The pool's transport lets a body be read for a while after the
	// context ends (drainingTransport); a cancelled call stops now.
	stop := context.AfterFunc(ctx, func() { _ = resp.Body.Close() })
	defer stop()
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("tools/call: HTTP 404: %w", mcp.ErrSessionMissing)
	case resp.StatusCode != http.StatusOK:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("tools/call: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(snippet))
	}
	want := []byte(`"` + id + `"`)
	var answer *rawMessage
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		answer, err = u.rawStream(ctx, cs, proto, resp.Body, want)
	} else {
		answer, err = u.rawJSONBody(resp.Body, want)
	}
	if err != nil {
		if ctx.Err() != nil {
			u.rawCancel(ctx, cs, proto, id)
			return nil, fmt.Errorf("tools/call: %w", ctx.Err())
		}
		return nil, err
	}
	if answer.Error != nil {
		return nil, answer.Error
	}
	if len(answer.Result) == 0 || answer.Result[0] != '{' {
		return nil, fmt.Errorf("tools/call: the answer has no result object")
	}
	if rawPlain(answer.Result) {
		return mcpwire.RawToolResultFrom(ctx).Set(answer.Result), nil
	}
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(answer.Result, res); err != nil {
		return nil, fmt.Errorf("tools/call: the result does not decode: %v", err)
	}
	return res, nil
}

// rawPost posts body (a JSON-RPC message) on cs's session. The request is
// marked as the raw path's, which the pool's [HTTPTransport] carries on its
// single-goroutine client.
func (u *upstream) rawPost(ctx context.Context, cs *mcp.ClientSession, proto string, body []byte, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(withRawRequest(ctx), http.MethodPost, u.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Content-Type"] = rawContentType
	h["Accept"] = rawAccept
	h["Mcp-Protocol-Version"] = []string{proto}
	h["Mcp-Session-Id"] = []string{cs.ID()}
	if name != "" {
		h["Mcp-Method"] = rawMethod
		h["Mcp-Name"] = []string{name}
	}
	return u.rawHTTPClient().Do(req)
}

var (
	rawContentType = []string{"application/json"}
	rawAccept      = []string{"application/json, text/event-stream"}
	rawMethod      = []string{"tools/call"}
)

// rawPlainTokens are the keys whose presence may make a result other than
// plainly successful. A result that has none of them anywhere (the usual
// case) is plain without decoding anything.
var rawPlainTokens = [][]byte{[]byte(`"isError"`), []byte(`"resultType"`), []byte(`"inputRequests"`), []byte(`"task"`), []byte(`"uri"`)}

// rawPlain reports whether result can be relayed as it is: successful,
// complete, not a task, and without resource URIs (which are rewritten to
// the gateway's namespace: exposeResourceURIs).
func rawPlain(result json.RawMessage) bool {
	found := false
	for _, tok := range rawPlainTokens {
		if bytes.Contains(result, tok) {
			found = true
			break
		}
	}
	if !found {
		return true
	}
	if bytes.Contains(result, []byte(`"uri"`)) {
		return false
	}
	var shape struct {
		IsError       bool            `json:"isError"`
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		Task          json.RawMessage `json:"task"`
	}
	if json.Unmarshal(result, &shape) != nil {
		return false
	}
	return !shape.IsError && (shape.ResultType == "" || shape.ResultType == "complete") && shape.InputRequests == nil && shape.Task == nil
}

// rawJSONBody reads a JSON response body, which holds the answer, within
// the bound on answers (limit.go): a longer one is not read further (the
// caller closes the body) and is refused.
func (u *upstream) rawJSONBody(body io.Reader, want []byte) (*rawMessage, error) {
	limit := u.maxResultBytes()
	pooled := rawBodies.Get().(*[]byte)
	data, over, err := readUpTo(body, limit, *pooled)
	defer func() {
		if cap(data) <= maxPooledRaw {
			*pooled = data[:0]
			rawBodies.Put(pooled)
		}
	}()
	if over {
		return nil, resultTooLarge(u.cfg.Name, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("tools/call: reading the answer: %w", err)
	}
	msg, err := decodeRawMessage(data)
	if err != nil {
		return nil, fmt.Errorf("tools/call: the answer is not JSON-RPC: %v", err)
	}
	if !bytes.Equal(msg.ID, want) {
		return nil, fmt.Errorf("tools/call: the answer is for another request (id %s)", msg.ID)
	}
	return msg, nil
}

// rawStream reads an event stream up to the answer with id want, handling
// the upstream's notifications and requests before it, in order, each event
// within the bound on answers (limit.go). After the answer the rest of the
// stream (its end, normally) is read for up to drainGrace, so that the
// connection is reused.
func (u *upstream) rawStream(ctx context.Context, cs *mcp.ClientSession, proto string, body io.ReadCloser, want []byte) (*rawMessage, error) {
	limit := int(u.maxResultBytes())
	br := rawReaders.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() { br.Reset(nil); rawReaders.Put(br) }()
	data := rawBuffers.Get().(*bytes.Buffer)
	data.Reset()
	defer putRawBuffer(data)
	for {
		line, err := rawLine(br, limit)
		if errors.Is(err, errResultTooLarge) {
			return nil, resultTooLarge(u.cfg.Name, int64(limit))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("tools/call: the upstream ended the stream without answering")
			}
			return nil, fmt.Errorf("tools/call: reading the answer: %w", err)
		}
		if len(line) > 0 {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.Write(bytes.TrimPrefix(v, []byte(" ")))
				if data.Len() > limit {
					return nil, resultTooLarge(u.cfg.Name, int64(limit))
				}
			}
			continue
		}
		if data.Len() == 0 {
			continue // an event without data (a priming event, say)
		}
		msg, err := decodeRawMessage(data.Bytes())
		data.Reset()
		if err != nil {
			u.log.Debug("raw call: an event that is not JSON-RPC", "error", err)
			continue
		}
		switch {
		case msg.Method != "" && len(msg.ID) > 0:
			u.rawAnswer(ctx, cs, proto, msg)
		case msg.Method != "":
			u.rawNotification(ctx, cs, msg)
		case bytes.Equal(msg.ID, want):
			t := time.AfterFunc(drainGrace, func() { _ = body.Close() })
			_, _ = io.Copy(io.Discard, br)
			t.Stop()
			return msg, nil
		}
	}
}

// rawLine reads one line of an event stream without its line ending, with
// lines longer than the reader's buffer joined, and bounded by limit
// (errResultTooLarge).
func rawLine(br *bufio.Reader, limit int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(long) > limit {
				return nil, errResultTooLarge
			}
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// rawNotification hands a notification read on the raw path to the handler
// go-sdk's client would have called.
func (u *upstream) rawNotification(ctx context.Context, cs *mcp.ClientSession, msg *rawMessage) {
	switch msg.Method {
	case "notifications/progress":
		p := new(mcp.ProgressNotificationParams)
		if err := json.Unmarshal(msg.Params, p); err != nil {
			u.notesHandled.Add(1) // it was counted as read
			return
		}
		u.forwardProgress(ctx, &mcp.ProgressNotificationClientRequest{Session: cs, Params: p})
	case "notifications/message":
		p := new(mcp.LoggingMessageParams)
		if err := json.Unmarshal(msg.Params, p); err != nil {
			u.notesHandled.Add(1)
			return
		}
		u.forwardLog(ctx, &mcp.LoggingMessageRequest{Session: cs, Params: p})
	case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed":
		signal(u.listChanged)
	}
}

// rawAnswer answers a request the upstream sent on the stream of a raw
// call, with the handlers go-sdk's client would have used, by a POST of the
// answer on the session.
func (u *upstream) rawAnswer(ctx context.Context, cs *mcp.ClientSession, proto string, msg *rawMessage) {
	var result any
	var err error
	switch msg.Method {
	case "ping":
		result = struct{}{}
	case "sampling/createMessage":
		p := new(mcp.CreateMessageParams)
		if err = json.Unmarshal(msg.Params, p); err == nil {
			result, err = u.forwardSampling(ctx, &mcp.CreateMessageRequest{Session: cs, Params: p})
		}
	case "elicitation/create":
		p := new(mcp.ElicitParams)
		if err = json.Unmarshal(msg.Params, p); err == nil {
			result, err = u.forwardElicitation(ctx, &mcp.ElicitRequest{Session: cs, Params: p})
		}
	default:
		err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + msg.Method}
	}
	out := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: msg.ID, Result: result}
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		out.Result, out.Error = nil, rpcErr
	}
	body, err := json.Marshal(out)
	if err != nil {
		u.log.Warn("raw call: encoding an answer to the upstream", "method", msg.Method, "error", err)
		return
	}
	u.rawSend(ctx, cs, proto, body)
}

// rawCancel tells the upstream that the call with id is withdrawn, as
// go-sdk's client does when a call's context ends.
func (u *upstream) rawCancel(ctx context.Context, cs *mcp.ClientSession, proto, id string) {
	reason := "the call was cancelled"
	if errors.Is(context.Cause(ctx), errCallTimeout) {
		reason = "the call timed out"
	}
	body := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"` + reason + `"}}`)
	u.rawSend(context.WithoutCancel(ctx), cs, proto, body)
}

// rawSend posts a message that expects no answer (202), bounded by a
// second.
func (u *upstream) rawSend(ctx context.Context, cs *mcp.ClientSession, proto string, body []byte) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := u.rawPost(ctx, cs, proto, body, "")
	if err != nil {
		u.log.Debug("raw call: sending to the upstream", "error", err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
}
