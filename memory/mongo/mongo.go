// Package mongo implements the memory services of the root package
// ([agentsmcp.InsightService], [agentsmcp.LearningService],
// [agentsmcp.ToolPerformanceService], [agentsmcp.PatternService]) and the
// agents' ([agentsmcp.ThoughtService], [agentsmcp.PlanService],
// [agentsmcp.TaskService]) on
// MongoDB, the production store selected by MONGODB_URI. A [*DB] is every
// service, like memory/sqlite's, and both pass memory/storetest.
//
// The code uses only the part of MongoDB that FerretDB 1.24 also
// implements, because FerretDB is what the tests run on: inserts, finds
// with sort/limit/projection, equality and range filters with $and/$or,
// upserts with $inc/$set/$setOnInsert/$max, findOneAndUpdate, and plain or
// multikey indexes. No transactions, TTL or text indexes, $lookup, $facet,
// or $group accumulators other than $sum (it needs none of them).
//
// Every counter (tool calls, pattern uses) changes by a single atomic
// update of one document, never by read-modify-write, and so do a task's
// version and lease (conditional updates), so any number of replicas can
// share one MongoDB database. FerretDB does not make those updates atomic;
// see DB.lockKey for what is done about it.
//
// Choices the root contracts leave to a store: text filters match whole
// words, folding case and accents (see text.go); a tool keeps the counts of
// its first [KeptErrorClasses] error classes, of which the
// [agentsmcp.MaxCommonErrors] most frequent are reported. Error texts are
// counted under their internal/toolperf.ErrorClass, and so are the texts of
// documents written before classes were normalised, when they are read.
//
// Collections (all in the database given to [Open]):
//
//	insights          one document per [agentsmcp.Insight], _id = its ID
//	learnings         one document per [agentsmcp.Learning], _id = its ID
//	tool_performance  one document per tool, _id = the tool name
//	plan_patterns     one document per (goal, steps), _id = a hash of both
//	vector_outbox     one document per pending [agentsmcp.OutboxEntry], _id = its Key
//	thoughts          one document per [agentsmcp.Thought], _id = its ID
//	plans             one document per [agentsmcp.Plan], _id = its ID
//	tasks             one document per [agentsmcp.Task], _id = its ID
//	audit_entries     one document per [agentsmcp.AuditEntry], _id = its ID
//	upstream_definitions  one document per [agentsmcp.UpstreamDefinition], _id = its Name
//	schema_meta       {_id: "schema", version: N}
package mongo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/view"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// DefaultTimeout bounds connecting to a server and selecting one, unless the
// URI (connectTimeoutMS, serverSelectionTimeoutMS) or [WithTimeout] says
// otherwise. It is what "fail fast" means for an unreachable database.
const DefaultTimeout = 10 * time.Second

// DefaultDatabase is used when neither [Open]'s database argument nor the
// URI's path names a database.
const DefaultDatabase = "agents_mcp"

// Collection names.
const (
	colInsights   = "insights"
	colLearnings  = "learnings"
	colToolPerf   = "tool_performance"
	colPatterns   = "plan_patterns"
	colSchemaMeta = "schema_meta"
	colOutbox     = "vector_outbox"
	colThoughts   = "thoughts"
	colPlans      = "plans"
	colTasks      = "tasks"
)

// DB is a connection to one MongoDB database holding agents-mcp's memory.
// It is safe for concurrent use; create it once with [Open] and share it.
type DB struct {
	client *mongo.Client
	db     *mongo.Database
	hosts  string // for messages: host list, never credentials

	// serialize is set when the server is FerretDB; see lockKey.
	serialize bool
	keyLocks  [64]sync.Mutex
	// callAdds counts AddCallCount calls, to sweep expired counters
	// every so often (call_counter.go).
	callAdds atomic.Uint64
}

// Interface checks: *DB is every memory service.
var (
	_ agentsmcp.InsightService         = (*DB)(nil)
	_ agentsmcp.LearningService        = (*DB)(nil)
	_ agentsmcp.ToolPerformanceService = (*DB)(nil)
	_ agentsmcp.PatternService         = (*DB)(nil)
	_ agentsmcp.ThoughtService         = (*DB)(nil)
	_ agentsmcp.PlanService            = (*DB)(nil)
	_ agentsmcp.TaskService            = (*DB)(nil)
	_ agentsmcp.TaskStepUpdater        = (*DB)(nil)
	_ agentsmcp.OutboxService          = (*DB)(nil)
)

// Option configures [Open].
type Option func(*config)

type config struct {
	timeout time.Duration // 0: the URI's values, else DefaultTimeout
}

// WithTimeout sets both the connect timeout and the server-selection
// timeout, overriding the URI and [DefaultTimeout]. Server selection is what
// makes every operation fail after d, rather than hang, while no server is
// reachable.
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// Open connects to the MongoDB deployment at uri, checks that it answers,
// and brings database to the schema this binary expects: it creates missing
// indexes (idempotently, so every replica may do it at startup) and runs
// forward migrations. An empty database falls back to the URI's path, then
// to [DefaultDatabase].
//
// Open fails within the configured timeout (10 s by default) when no server
// answers, with an error that names the hosts but never the credentials; it
// returns an error wrapping [ErrSchemaTooNew] when the database was written
// by a newer agents-mcp. Whatever the URI says, writes are acknowledged by
// a majority of the replica set and reads go to the primary with read
// concern "majority", so an acknowledged write is never rolled back nor
// hidden from the next read.
func Open(ctx context.Context, uri, database string, opts ...Option) (*DB, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	cs, err := connstring.ParseAndValidate(uri)
	if err != nil {
		// The parser's message may quote the URI; keep only a scrubbed text.
		return nil, fmt.Errorf("mongodb: invalid connection URI: %s", redact.Message(err.Error()))
	}
	hosts := strings.Join(cs.Hosts, ",")
	fail := func(what string, err error) error {
		// The driver's errors are flattened into scrubbed text on purpose:
		// wrapping them would let a careless %+v print whatever they hold.
		return fmt.Errorf("mongodb: %s %s: %s", what, hosts, redact.Message(err.Error(), cs.Password))
	}
	if database == "" {
		database = cs.Database
	}
	if database == "" {
		database = DefaultDatabase
	}
	if err := checkDatabaseName(database); err != nil {
		return nil, err
	}

	co := options.Client().ApplyURI(uri).
		SetWriteConcern(writeconcern.Majority()).
		SetReadConcern(readconcern.Majority()).
		SetReadPreference(readpref.Primary())
	if cs.AppName == "" {
		co.SetAppName("agents-mcp") // names our connections in the server's logs
	}
	switch {
	case cfg.timeout > 0:
		co.SetConnectTimeout(cfg.timeout).SetServerSelectionTimeout(cfg.timeout)
	default:
		if !cs.ConnectTimeoutSet {
			co.SetConnectTimeout(DefaultTimeout)
		}
		if !cs.ServerSelectionTimeoutSet {
			co.SetServerSelectionTimeout(DefaultTimeout)
		}
	}
	client, err := mongo.Connect(co)
	if err != nil {
		return nil, fail("cannot connect to", err)
	}
	db := &DB{client: client, db: client.Database(database), hosts: hosts}
	// Connect is lazy; Ping selects a server, so an unreachable deployment
	// fails here within the server-selection timeout.
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, fail("cannot reach", err)
	}
	db.serialize = isFerretDB(ctx, client)
	if err := db.migrate(ctx); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("mongodb: prepare database %q on %s: %w", database, hosts, view.Error(err, cs.Password))
	}
	return db, nil
}

// Close disconnects, waiting for in-flight operations until ctx ends.
func (db *DB) Close(ctx context.Context) error {
	if err := db.client.Disconnect(ctx); err != nil {
		return fmt.Errorf("mongodb: disconnect from %s: %w", db.hosts, err)
	}
	return nil
}

// Ping reports whether the primary answers; it is the store's readiness
// check. An unreachable server is EUNAVAILABLE.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.client.Ping(ctx, readpref.Primary()); err != nil {
		return wrap(err, "ping")
	}
	return nil
}

// lockKey serialises, within this process, the updates of the document
// with the given key, and returns the unlock function. It does nothing on
// MongoDB, where every update is atomic by itself.
//
// FerretDB 1.24 is what the tests (and the e2e scripts) run on, and it
// applies an update as read, modify in Go, write back, with nothing in
// between to stop a concurrent update of the same document: concurrent
// $inc lose counts (measured: 24 of 200). On FerretDB, therefore, the
// counter updates of one tool or pattern take turns. Several processes
// sharing one FerretDB can still lose counts; FerretDB is a test server.
func (db *DB) lockKey(key string) (unlock func()) {
	if !db.serialize {
		return func() {}
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	m := &db.keyLocks[h.Sum32()%uint32(len(db.keyLocks))]
	m.Lock()
	return m.Unlock
}

// isFerretDB reports whether the server is FerretDB, which adds its own
// version to the buildInfo answer.
func isFerretDB(ctx context.Context, client *mongo.Client) bool {
	var info struct {
		FerretDBVersion string `bson:"ferretdbVersion"`
	}
	err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info)
	return err == nil && info.FerretDBVersion != ""
}

// Database returns the name of the database in use.
func (db *DB) Database() string { return db.db.Name() }

// nowMs is the store's clock at the precision BSON dates keep.
func (db *DB) nowMs() time.Time { return ms(time.Now()) }

// ms truncates t to the millisecond precision of BSON dates, in UTC, so that
// what a Create returns equals what a later Find reads.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// checkDatabaseName rejects names MongoDB refuses, before a confusing server
// error does.
func checkDatabaseName(name string) error {
	if len(name) > 63 || strings.ContainsAny(name, `/\. "$*<>:|?`+"\x00") {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "mongodb database name %q is invalid", name)
	}
	return nil
}

// wrap turns a driver error into an application error for the service
// methods: no documents → ENOTFOUND, duplicate key → ECONFLICT, no server →
// EUNAVAILABLE; anything else keeps its chain (EINTERNAL). The driver's
// error stays in the chain for logs; callers see only the [agentsmcp.Error]
// message.
func wrap(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mongo.ErrNoDocuments):
		return fmt.Errorf("%w: %w", agentsmcp.Errorf(agentsmcp.ENOTFOUND, "%s: not found", what), err)
	case mongo.IsDuplicateKeyError(err):
		return fmt.Errorf("%w: %w", agentsmcp.Errorf(agentsmcp.ECONFLICT, "%s: already exists", what), err)
	case isUnavailable(err):
		return fmt.Errorf("%w: %w", agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the memory store is unavailable"), err)
	}
	return fmt.Errorf("mongodb: %s: %w", what, err)
}

// isUnavailable reports errors that mean "no server to talk to" rather than
// "the server refused this".
func isUnavailable(err error) bool {
	var sse topology.ServerSelectionError
	return errors.As(err, &sse) || mongo.IsNetworkError(err)
}
