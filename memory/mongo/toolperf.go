package mongo

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Tool performance lives in the tool_performance collection, one document
// per tool:
//
//	{_id: tool, calls, errors, buckets: {"0": n, …}, lastCallAt,
//	 commonErrors: {<escaped class>: n, …}, errorClasses: <number of classes>,
//	 successWeight, failureWeight, weightEpoch, consecutiveFailures,
//	 lastSuccessAt, lastFailureAt, lastErrorClass}
//
// Every change is an atomic update ($inc, $max, $mul) of that one document,
// so concurrent recorders on any number of replicas never lose a count.
// The outcome weights (agentsmcp.DecayedCounts) are relative to
// weightEpoch: a recorder adds its weight only where the epoch is still the
// one it computed the weight from, and moves the epoch (scaling both
// weights) the same way, retrying when another recorder moved it first.

// Bounds of the per-tool error statistics.
const (
	// KeptErrorClasses is how many distinct error classes a tool keeps
	// counters for: the first ones seen. Errors of a class that comes later
	// count in Errors only. It bounds the size of a tool's document; it is
	// several times [agentsmcp.MaxCommonErrors] so that the reported most
	// frequent classes need not be the very first ones.
	KeptErrorClasses = 4 * agentsmcp.MaxCommonErrors
)

type toolPerfDoc struct {
	Tool         string           `bson:"_id"`
	Calls        int64            `bson:"calls"`
	Errors       int64            `bson:"errors"`
	Buckets      map[string]int64 `bson:"buckets"`
	CommonErrors map[string]int64 `bson:"commonErrors"`
	LastCallAt   time.Time        `bson:"lastCallAt"`

	SuccessWeight       float64   `bson:"successWeight"`
	FailureWeight       float64   `bson:"failureWeight"`
	WeightEpoch         time.Time `bson:"weightEpoch"`
	ConsecutiveFailures int64     `bson:"consecutiveFailures"`
	LastSuccessAt       time.Time `bson:"lastSuccessAt"`
	LastFailureAt       time.Time `bson:"lastFailureAt"`
	LastErrorClass      string    `bson:"lastErrorClass"`
}

func (d *toolPerfDoc) performance() *agentsmcp.ToolPerformance {
	p := &agentsmcp.ToolPerformance{
		Tool:         d.Tool,
		Calls:        d.Calls,
		Errors:       d.Errors,
		Buckets:      make([]int64, len(agentsmcp.LatencyBucketBounds)+1),
		CommonErrors: make(map[string]int64, agentsmcp.MaxCommonErrors),
		LastCallAt:   d.LastCallAt.UTC(),

		Recent:              agentsmcp.DecayedCounts{Successes: d.SuccessWeight, Failures: d.FailureWeight, At: utcOrZero(d.WeightEpoch)},
		ConsecutiveFailures: d.ConsecutiveFailures,
		LastSuccessAt:       utcOrZero(d.LastSuccessAt),
		LastFailureAt:       utcOrZero(d.LastFailureAt),
		LastErrorClass:      toolperf.LastErrorClass(d.LastErrorClass),
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
	counted := make([]toolperf.ErrorClassCount, len(counts))
	for i, c := range counts {
		counted[i] = toolperf.ErrorClassCount{Class: c.class, Count: c.n}
	}
	// Documents written before classes were normalised hold error texts:
	// they are served as classes.
	p.CommonErrors = toolperf.CommonErrors(counted)
	return p
}

// RecordToolCall counts one call of c.Tool: a batch of one (see
// RecordToolCalls).
func (db *DB) RecordToolCall(ctx context.Context, c agentsmcp.ToolCall) error {
	return db.RecordToolCalls(ctx, []agentsmcp.ToolCall{c})
}

// RecordToolCalls counts calls, summed by tool first
// ([toolperf.SumCalls]): for each tool, calls, errors, the latency
// buckets, and the times of the latest call (c.At, or now when zero) and
// of each outcome. A failed call also counts under its error class (see
// errorClass), if the tool has room for it ([KeptErrorClasses]). EINVALID,
// with nothing counted, for an invalid call or too large a batch.
//
// Each tool's counters change in one atomic upsert, whatever the number of
// its calls in the batch. The outcome weights take one more conditional
// update, and each error class one to three (the class exists → count it;
// else room for a new class → create it), each atomic, so counts stay
// exact under concurrency; a crash between the steps can leave an error
// counted in Errors but in no class. MongoDB has no transactions on every
// deployment, so a batch that fails part-way may be counted in part.
func (db *DB) RecordToolCalls(ctx context.Context, calls []agentsmcp.ToolCall) error {
	if err := validate.ToolCalls(calls); err != nil {
		return err
	}
	for _, t := range toolperf.SumCalls(calls, db.nowMs()) {
		if err := db.recordTotals(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// recordTotals counts the calls of one tool of a batch.
func (db *DB) recordTotals(ctx context.Context, t *toolperf.CallTotals) error {
	at := ms(t.LastCallAt)
	inc := bson.D{{Key: "calls", Value: t.Calls}}
	for i, n := range t.Buckets {
		if n > 0 {
			inc = append(inc, bson.E{Key: "buckets." + strconv.Itoa(i), Value: n})
		}
	}
	// $max, not $set: calls recorded out of order never move the times
	// back.
	latest := bson.D{{Key: "lastCallAt", Value: at}}
	var set bson.D
	if t.Succeeded {
		latest = append(latest, bson.E{Key: "lastSuccessAt", Value: ms(t.LastSuccessAt)})
		set = append(set, bson.E{Key: "consecutiveFailures", Value: t.TrailingFailures})
	} else {
		inc = append(inc, bson.E{Key: "consecutiveFailures", Value: t.TrailingFailures})
	}
	if t.Errors > 0 {
		inc = append(inc, bson.E{Key: "errors", Value: t.Errors})
		latest = append(latest, bson.E{Key: "lastFailureAt", Value: ms(t.LastFailureAt)})
		set = append(set, bson.E{Key: "lastErrorClass", Value: t.LastErrorClass})
	}
	update := bson.D{
		{Key: "$inc", Value: inc},
		{Key: "$max", Value: latest},
		{Key: "$set", Value: set},
		{Key: "$setOnInsert", Value: bson.D{{Key: "errorClasses", Value: int64(0)}, {Key: "weightEpoch", Value: at}}},
	}
	defer db.lockKey(colToolPerf + "\x00" + t.Tool)()
	col := db.db.Collection(colToolPerf)
	filter := bson.D{{Key: "_id", Value: t.Tool}}
	var doc struct {
		WeightEpoch *time.Time `bson:"weightEpoch"`
	}
	err := upsertRetry(func() error {
		return col.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetUpsert(true).
			SetReturnDocument(options.After)).Decode(&doc) // no projection: FerretDB has none on findAndModify
	})
	if err != nil {
		return wrap(err, "record calls of tool "+t.Tool)
	}
	if err := db.addOutcomeWeights(ctx, t.Tool, doc.WeightEpoch, at, t.Recent.Successes, t.Recent.Failures); err != nil {
		return wrap(err, "record outcomes of tool "+t.Tool)
	}
	for _, e := range t.ErrorClasses {
		if err := db.countError(ctx, t.Tool, e.Class, e.Count); err != nil {
			return wrap(err, "record error of tool "+t.Tool)
		}
	}
	return nil
}

// maxWeightExponent bounds how many half-lives a call may lie after the
// weights' epoch before the epoch moves to it: weights stay below
// 2^maxWeightExponent per call, far from the limits of a float64.
const maxWeightExponent = 32

// addOutcomeWeights adds outcomes weighed as of at (successes and
// failures, each outcome weighing at most 1) to the tool's document, whose
// weights were relative to epoch when last read (nil: a document from
// before the weights, which has none). Each update is conditional on the
// epoch it was computed from; when another recorder moved it meanwhile,
// the epoch is read again and the update recomputed.
func (db *DB) addOutcomeWeights(ctx context.Context, tool string, epoch *time.Time, at time.Time, successes, failures float64) error {
	col := db.db.Collection(colToolPerf)
	for range 10 {
		var filter, update bson.D
		moves := true
		switch w := 0.0; {
		case epoch == nil:
			// A document without weights: they start at at, from none.
			filter = bson.D{{Key: "_id", Value: tool}, {Key: "weightEpoch", Value: bson.D{{Key: "$exists", Value: false}}}}
			update = bson.D{
				{Key: "$set", Value: bson.D{{Key: "weightEpoch", Value: at}, {Key: "successWeight", Value: 0.0}, {Key: "failureWeight", Value: 0.0}}},
			}
		case func() bool { w = toolperf.OutcomeWeight(at, *epoch); return w <= math.Exp2(maxWeightExponent) }():
			filter = bson.D{{Key: "_id", Value: tool}, {Key: "weightEpoch", Value: *epoch}}
			update = bson.D{{Key: "$inc", Value: bson.D{{Key: "successWeight", Value: w * successes}, {Key: "failureWeight", Value: w * failures}}}}
			moves = false
		default:
			// Move the epoch to at, scaling what was counted.
			scale := toolperf.OutcomeWeight(*epoch, at)
			filter = bson.D{{Key: "_id", Value: tool}, {Key: "weightEpoch", Value: *epoch}}
			update = bson.D{
				{Key: "$mul", Value: bson.D{{Key: "successWeight", Value: scale}, {Key: "failureWeight", Value: scale}}},
				{Key: "$set", Value: bson.D{{Key: "weightEpoch", Value: at}}},
			}
		}
		res, err := col.UpdateOne(ctx, filter, update)
		switch {
		case err != nil:
			return err
		case res.MatchedCount > 0 && !moves:
			return nil
		case res.MatchedCount > 0:
			moved := at
			epoch = &moved // now add the weight on the new epoch
			continue
		}
		var doc struct {
			WeightEpoch *time.Time `bson:"weightEpoch"`
		}
		if err := col.FindOne(ctx, bson.D{{Key: "_id", Value: tool}}).Decode(&doc); err != nil {
			return err
		}
		epoch = doc.WeightEpoch
	}
	return fmt.Errorf("the weights' epoch kept moving")
}

// countError adds n to class in the tool's document, which exists:
// count the existing class; else create it if the tool has room; else, the
// create having missed, count the class if a concurrent call just created
// it. Classes are never removed and errorClasses only grows, so once the
// create misses for lack of room no class can appear later.
func (db *DB) countError(ctx context.Context, tool, class string, n int64) error {
	col := db.db.Collection(colToolPerf)
	field := "commonErrors." + escapeKey(class)
	countExisting := func() (bool, error) {
		res, err := col.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: tool}, {Key: field, Value: bson.D{{Key: "$exists", Value: true}}}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: field, Value: n}}}})
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
		bson.D{{Key: "$inc", Value: bson.D{{Key: field, Value: n}, {Key: "errorClasses", Value: int64(1)}}}})
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
