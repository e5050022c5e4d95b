package mongo

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Tool performance lives in the tool_performance collection, one document
// per tool:
//
//	{_id: tool, calls, errors, buckets: {"0": n, …}, lastCallAt,
//	 commonErrors: {<escaped class>: n, …}, errorClasses: <number of classes>}
//
// Every change is an atomic update ($inc, $max) of that one document, so
// concurrent recorders on any number of replicas never lose a count.

// Bounds of the per-tool error statistics.
const (
	// KeptErrorClasses is how many distinct error classes a tool keeps
	// counters for: the first ones seen. Errors of a class that comes later
	// count in Errors only. It bounds the size of a tool's document; it is
	// several times [agentsmcp.MaxCommonErrors] so that the reported most
	// frequent classes need not be the very first ones.
	KeptErrorClasses = 4 * agentsmcp.MaxCommonErrors
	// MaxErrorClassBytes is the length an error text is cut to.
	MaxErrorClassBytes = 200
)

type toolPerfDoc struct {
	Tool         string           `bson:"_id"`
	Calls        int64            `bson:"calls"`
	Errors       int64            `bson:"errors"`
	Buckets      map[string]int64 `bson:"buckets"`
	CommonErrors map[string]int64 `bson:"commonErrors"`
	LastCallAt   time.Time        `bson:"lastCallAt"`
}

func (d *toolPerfDoc) performance() *agentsmcp.ToolPerformance {
	p := &agentsmcp.ToolPerformance{
		Tool:         d.Tool,
		Calls:        d.Calls,
		Errors:       d.Errors,
		Buckets:      make([]int64, len(agentsmcp.LatencyBucketBounds)+1),
		CommonErrors: make(map[string]int64, agentsmcp.MaxCommonErrors),
		LastCallAt:   d.LastCallAt.UTC(),
	}
	for k, n := range d.Buckets {
		if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(p.Buckets) {
			p.Buckets[i] += n
		}
	}
	type count struct {
		class string
		n     int64
	}
	var counts []count
	for k, n := range d.CommonErrors {
		if class, err := unescapeKey(k); err == nil {
			counts = append(counts, count{class, n})
		}
	}
	// Report the most frequent classes; ties by class, so that the cut is
	// deterministic.
	slices.SortFunc(counts, func(a, b count) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.class, b.class))
	})
	for _, c := range counts[:min(len(counts), agentsmcp.MaxCommonErrors)] {
		p.CommonErrors[c.class] = c.n
	}
	return p
}

// RecordToolCall counts one call of c.Tool: calls, errors, the latency
// bucket of c.Duration, and the time of the latest call (c.At, or now when
// zero). A failed call also counts under its error class (see errorClass),
// if the tool has room for it ([KeptErrorClasses]). EINVALID for an empty
// tool name or a negative duration.
//
// The counters change in one atomic upsert. The error class takes one to
// three more conditional updates (the class exists → count it; else room
// for a new class → create it), each atomic, so class counts stay exact
// under concurrency; a crash between the two steps can leave an error
// counted in Errors but in no class.
func (db *DB) RecordToolCall(ctx context.Context, c agentsmcp.ToolCall) error {
	switch {
	case c.Tool == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call without a tool name")
	case c.Duration < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call duration %v is negative", c.Duration)
	}
	at := ms(c.At)
	if c.At.IsZero() {
		at = db.nowMs()
	}
	failed := c.Error != ""
	inc := bson.D{
		{Key: "calls", Value: int64(1)},
		{Key: "buckets." + strconv.Itoa(bucketOf(c.Duration)), Value: int64(1)},
	}
	if failed {
		inc = append(inc, bson.E{Key: "errors", Value: int64(1)})
	}
	update := bson.D{
		{Key: "$inc", Value: inc},
		// $max, not $set: calls recorded out of order never move
		// lastCallAt back.
		{Key: "$max", Value: bson.D{{Key: "lastCallAt", Value: at}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "errorClasses", Value: int64(0)}}},
	}
	defer db.lockKey(colToolPerf + "\x00" + c.Tool)()
	col := db.db.Collection(colToolPerf)
	filter := bson.D{{Key: "_id", Value: c.Tool}}
	err := upsertRetry(func() error {
		_, err := col.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return wrap(err, "record call of tool "+c.Tool)
	}
	if failed {
		if err := db.countError(ctx, c.Tool, errorClass(c.Error)); err != nil {
			return wrap(err, "record error of tool "+c.Tool)
		}
	}
	return nil
}

// countError adds one to class in the tool's document, which exists:
// count the existing class; else create it if the tool has room; else, the
// create having missed, count the class if a concurrent call just created
// it. Classes are never removed and errorClasses only grows, so once the
// create misses for lack of room no class can appear later.
func (db *DB) countError(ctx context.Context, tool, class string) error {
	col := db.db.Collection(colToolPerf)
	field := "commonErrors." + escapeKey(class)
	countExisting := func() (bool, error) {
		res, err := col.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: tool}, {Key: field, Value: bson.D{{Key: "$exists", Value: true}}}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: field, Value: int64(1)}}}})
		return err == nil && res.MatchedCount > 0, err
	}
	if ok, err := countExisting(); ok || err != nil {
		return err
	}
	res, err := col.UpdateOne(ctx,
		bson.D{
			{Key: "_id", Value: tool},
			{Key: field, Value: bson.D{{Key: "$exists", Value: false}}},
			{Key: "errorClasses", Value: bson.D{{Key: "$lt", Value: KeptErrorClasses}}},
		},
		bson.D{{Key: "$inc", Value: bson.D{{Key: field, Value: int64(1)}, {Key: "errorClasses", Value: int64(1)}}}})
	if err != nil || res.MatchedCount > 0 {
		return err
	}
	_, err = countExisting()
	return err
}

// FindToolPerformance returns ENOTFOUND for a tool never recorded.
func (db *DB) FindToolPerformance(ctx context.Context, tool string) (*agentsmcp.ToolPerformance, error) {
	var d toolPerfDoc
	if err := db.db.Collection(colToolPerf).FindOne(ctx, bson.D{{Key: "_id", Value: tool}}).Decode(&d); err != nil {
		return nil, wrap(err, "tool "+tool)
	}
	return d.performance(), nil
}

// ListToolPerformance returns every tool's figures, most called first (ties
// by tool name).
func (db *DB) ListToolPerformance(ctx context.Context) ([]*agentsmcp.ToolPerformance, error) {
	cur, err := db.db.Collection(colToolPerf).Find(ctx, bson.D{},
		options.Find().SetSort(bson.D{{Key: "calls", Value: -1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list tool performance")
	}
	var docs []toolPerfDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list tool performance")
	}
	items := make([]*agentsmcp.ToolPerformance, len(docs))
	for i := range docs {
		items[i] = docs[i].performance()
	}
	return items, nil
}

// bucketOf is the index of the latency bucket of d: the first bound d does
// not exceed, or the open last bucket.
func bucketOf(d time.Duration) int {
	for i, b := range agentsmcp.LatencyBucketBounds {
		if d <= b {
			return i
		}
	}
	return len(agentsmcp.LatencyBucketBounds)
}

// errorClass normalises an error text to the class it is counted under: its
// first line, trimmed of space, cut to [MaxErrorClassBytes]. A blank text
// is "error".
func errorClass(text string) string {
	// Invalid UTF-8 would make an invalid document key.
	line, _, _ := strings.Cut(strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD")), "\n")
	class := agentsmcp.TruncateUTF8(strings.TrimSpace(line), MaxErrorClassBytes)
	if class == "" {
		return "error"
	}
	return class
}

// escapeKey makes an error class usable as a document key: MongoDB field
// names must not contain '.' (a path separator) or start with '$' (an
// operator), and BSON keys cannot hold NUL. Those bytes, and '%' itself,
// are percent-encoded, which url.PathUnescape reverses exactly.
func escapeKey(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%', '.', '$', 0:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeKey reverses escapeKey.
func unescapeKey(k string) (string, error) { return url.PathUnescape(k) }

// upsertRetry runs an upsert once more when it fails with a duplicate key:
// two concurrent upserts of a new _id can both try to insert, and the loser
// must then update the document the winner created.
func upsertRetry(op func() error) error {
	err := op()
	if mongo.IsDuplicateKeyError(err) {
		err = op()
	}
	return err
}
