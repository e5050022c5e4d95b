package mongo_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/memory/mongo"
)

// Open the production store from MONGODB_URI and use it as the memory
// services. The same *DB is every service.
func ExampleOpen() {
	ctx := context.Background()
	db, err := mongo.Open(ctx, os.Getenv("MONGODB_URI"), "agents_mcp", mongo.WithTimeout(5*time.Second))
	if err != nil {
		// Names the hosts, never the credentials.
		log.Fatal(err)
	}
	defer db.Close(ctx)

	var (
		insights agentsmcp.InsightService         = db
		perf     agentsmcp.ToolPerformanceService = db
	)
	in := &agentsmcp.Insight{Text: "list_directory before search_files", Type: agentsmcp.InsightBestPractice}
	if err := insights.CreateInsight(ctx, in); err != nil {
		log.Fatal(err)
	}
	if err := perf.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "files__search_files", Duration: 120 * time.Millisecond}); err != nil {
		log.Fatal(err)
	}
	p, err := perf.FindToolPerformance(ctx, "files__search_files")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Calls, toolperf.Percentile(p, 0.95))
}
