// Command pineconeserver runs internal/pineconetest, a Pinecone index on
// Pinecone's published wire protocols, on loopback for the e2e tests: a
// real `agents-mcp serve` reaches it with PINECONE_HOST (or PINECONE_INDEX
// and PINECONE_CONTROLLER_HOST) through go-pinecone, as it would reach
// Pinecone.
//
//	pineconeserver -dimension 384 [-index agents-mcp] [-data 127.0.0.1:0] [-control 127.0.0.1:0]
//
// The API key it accepts is read from PINECONE_TEST_API_KEY (not a flag,
// which other users of the machine could read). It prints one JSON line on
// stdout, {"data_host", "control_url", "index"}, then logs each call as a
// JSON line on stderr, and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/agents-mcp/agents-mcp/internal/pineconetest"
)

func main() {
	dim := flag.Int("dimension", 384, "the index's dimension")
	index := flag.String("index", "agents-mcp", "the index's name")
	metric := flag.String("metric", "cosine", "the index's metric")
	data := flag.String("data", "127.0.0.1:0", "the data plane's loopback address")
	control := flag.String("control", "127.0.0.1:0", "the control plane's loopback address")
	flag.Parse()
	key := os.Getenv("PINECONE_TEST_API_KEY")
	if key == "" {
		fmt.Fprintln(os.Stderr, "pineconeserver: set PINECONE_TEST_API_KEY")
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	srv, err := pineconetest.Start(pineconetest.Options{
		APIKey: key, IndexName: *index, Dimension: *dim, Metric: *metric,
		DataAddr: *data, ControlAddr: *control, Logger: logger,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{
		"data_host": srv.DataHost(), "control_url": srv.ControlURL(), "index": srv.IndexName(),
	})
	<-ctx.Done()
	srv.Close()
	for _, e := range srv.ProtocolErrors() {
		logger.Error("control-plane exchange outside Pinecone's OpenAPI document", "detail", e)
	}
	if len(srv.ProtocolErrors()) > 0 {
		os.Exit(1)
	}
}
