package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

func Example() {
	dataDir, err := os.MkdirTemp("", "agents-mcp-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dataDir)

	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, "agents-mcp.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	in := &agentsmcp.Insight{
		Text:       "search_files is slow on large trees; call list_directory first",
		Type:       agentsmcp.InsightBestPractice,
		AppliesTo:  []string{"files__search_files"},
		Confidence: 0.8,
	}
	if err := db.CreateInsight(ctx, in); err != nil {
		log.Fatal(err)
	}

	found, err := db.FindInsightByID(ctx, in.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(found.Type, found.Confidence, found.AppliesTo)
	fmt.Println(found.Text)

	// Words of a text filter may come in any order, and '*' or ';' mean nothing.
	items, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{Text: "TREES; slow*", AppliesTo: "files__search_files"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(items), items[0].ID == in.ID)
	// Output:
	// best_practice 0.8 [files__search_files]
	// search_files is slow on large trees; call list_directory first
	// 1 true
}
