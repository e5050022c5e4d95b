// Command ferretdb runs a standalone FerretDB, a MongoDB wire-protocol
// server on SQLite, so that e2e scripts can run agents-mcp with
// MONGODB_URI where no MongoDB server is available. It is a test tool:
// FerretDB is slow at scale and does not make concurrent updates atomic
// (see memory/mongo), and nothing linked into cmd/agents-mcp imports it.
//
// It prints the MongoDB URI on the first line of standard output once the
// server listens, then serves until SIGINT or SIGTERM:
//
//	go run ./scripts/ferretdb -addr 127.0.0.1:27018 -dir /tmp/ferret
//	mongodb://127.0.0.1:27018/
//
// With the default -dir, the data lives in a temporary directory removed at
// exit; a -dir given by the caller is kept.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "TCP address to listen on; port 0 picks a free port")
	dir := flag.String("dir", "", "directory of the SQLite data files (default: a temporary directory, removed at exit)")
	verbose := flag.Bool("v", false, "log every FerretDB message, not only its own errors")
	flag.Parse()

	if *dir == "" {
		tmp, err := os.MkdirTemp("", "ferretdb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}

	// FerretDB logs each error it answers a client with as a warning, with
	// the whole message: noise for a test server.
	level := slog.LevelError
	if *verbose {
		level = slog.LevelDebug
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *addr},
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	// New has opened the listening socket already: once this line is out,
	// connections succeed (they are served as soon as Run accepts them).
	fmt.Println(f.MongoDBURI())
	slog.Info("ferretdb: serving", "dir", *dir)
	return <-done
}
