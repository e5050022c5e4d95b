package router

import (
	"context"
	"log/slog"
)

// peerMistakes are the messages go-sdk v1.8.0 logs at ERROR when a client
// breaks the protocol: a 2026-07-28 request of a method that revision
// removed (ping, initialize, logging/setLevel, resources/subscribe…), a call
// before initialize, a second initialize or initialized. The client gets
// its error answer; the server is fine, so they are warnings here.
var peerMistakes = map[string]bool{
	"method removed in the new protocol":   true,
	"method invalid during initialization": true,
	"initialized before initialize":        true,
	"duplicate initialized notification":   true,
	"duplicate initialize request":         true,
}

// sdkLogHandler is the log handler given to go-sdk's server: it logs the
// [peerMistakes] at WARN and everything else as it comes.
type sdkLogHandler struct{ slog.Handler }

func (h sdkLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && peerMistakes[r.Message] {
		if !h.Handler.Enabled(ctx, slog.LevelWarn) {
			return nil
		}
		r.Level = slog.LevelWarn
	}
	return h.Handler.Handle(ctx, r)
}

func (h sdkLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sdkLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h sdkLogHandler) WithGroup(name string) slog.Handler {
	return sdkLogHandler{h.Handler.WithGroup(name)}
}
