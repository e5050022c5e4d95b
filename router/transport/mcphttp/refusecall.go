package mcphttp

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refuseCall asks refuse ([Options.RefuseCall]) about body when it is one
// tools/call, and answers it 429 with Retry-After when refused; it reports
// whether it answered. Bodies that are not a tools/call pay one substring
// search.
func refuseCall(w http.ResponseWriter, req *http.Request, body []byte,
	refuse func(*http.Request, string) (*jsonrpc.Error, time.Duration, bool)) bool {
	if !bytes.Contains(body, []byte(`"tools/call"`)) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || m.Params.Name == "" || len(m.ID) == 0 {
		return false
	}
	rpcErr, wait, refused := refuse(req, m.Params.Name)
	if !refused {
		return false
	}
	resp, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", m.ID, rpcErr})
	if err != nil {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(resp)
	return true
}
