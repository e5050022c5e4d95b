package mongo

import (
	"context"
	"errors"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// SchemaVersion is the layout this binary reads and writes. It is stored in
// schema_meta as {_id: "schema", version: N}.
const SchemaVersion = 10

// ErrSchemaTooNew is returned (wrapped) by [Open] for a database whose
// schema version is higher than [SchemaVersion]: a newer agents-mcp wrote
// it, and this binary would misread it. Upgrade the binary.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// migration moves the data from version-1 to version. Migrations must be
// idempotent: two replicas starting together may both run one, and a crash
// between the migration and the version bump runs it again.
type migration struct {
	version int
	name    string
	up      func(ctx context.Context, db *mongo.Database) error
}

// migrations in order; the last one's version is [SchemaVersion].
var migrations = []migration{
	// Version 1 is the initial layout. Collections come into being with
	// their indexes (ensureIndexes) or their first document, so there is
	// nothing to transform.
	{version: 1, name: "initial layout", up: func(context.Context, *mongo.Database) error { return nil }},
	// Version 2 adds the agents' collections (thoughts, plans, tasks,
	// and catalog_tools, which no code uses any more and which databases of
	// that time may still hold, empty), created with their indexes;
	// nothing to transform. It
	// keeps binaries that do not know them from writing to the database.
	{version: 2, name: "agents: catalog, thoughts, plans, tasks", up: func(context.Context, *mongo.Database) error { return nil }},
	// Version 3 adds audit_entries, created with its indexes; nothing to
	// transform.
	{version: 3, name: "audit trail", up: func(context.Context, *mongo.Database) error { return nil }},
	// Version 4 adds upstream_definitions, which needs no index but _id's
	// and comes into being with its first document; nothing to transform.
	// It keeps binaries that do not know run-time upstreams, and would
	// serve another set of them, from opening the database.
	{version: 4, name: "upstream definitions", up: func(context.Context, *mongo.Database) error { return nil }},
	// Version 5 records who created each thought, plan and task (field
	// principal, and principalTools on tasks), with an index per list
	// filtered by it. Documents written before have no principal field,
	// which reads as "": nothing to rewrite.
	{version: 5, name: "principals of thoughts, plans and tasks", up: func(context.Context, *mongo.Database) error { return nil }},
	// Version 6 records the principal of every insight, learning and plan
	// pattern (see agentsmcp.MemoryVisibility). Documents from before it
	// have none and are given "anonymous" (agentsmcp.AnonymousPrincipal):
	// who produced them is unknown, so under the default visibility only
	// the anonymous principal and the admin API see them. Pattern ids are
	// unchanged: the anonymous principal's are derived as before. Setting
	// the field only where it is missing makes the migration idempotent.
	{version: 6, name: "memory principal", up: setMissingPrincipal},
	// Version 7 adds the evidence of tool reliability to tool_performance
	// (successWeight, failureWeight, weightEpoch, consecutiveFailures,
	// lastSuccessAt, lastFailureAt, lastErrorClass; see toolperf.go). A
	// document from before it starts with its whole counts weighed as of
	// its last call, as SQLite's migration 0008 does; it has no streak and
	// no outcome times. Only documents without weightEpoch are changed,
	// each conditionally, so the migration is idempotent.
	{version: 7, name: "tool reliability evidence", up: seedOutcomeWeights},
	// Version 8 adds credentials and oauth_states (credential.go), which
	// need no index but _id's and come into being with their first
	// document; nothing to transform. It keeps binaries that do not know
	// credentials from opening the database.
	{version: 8, name: "credentials", up: func(context.Context, *mongo.Database) error { return nil }},
	// Version 9 stores HTTP tool sources in upstream_definitions beside the
	// MCP upstreams, told apart by a kind field ("mcp" or "http"); the
	// documents from before are MCP upstreams and get kind "mcp", only
	// where it is missing, so the migration is idempotent. It keeps
	// binaries that would start an HTTP source as an MCP upstream from
	// opening the database.
	{version: 9, name: "http tool sources", up: setMissingUpstreamKind},
	// Version 10 records the stored size of each insight and task (field
	// bytes: Insight.StoredBytes, Task.StoredBytes), which the quotas per
	// principal sum (usage.go). Documents from before get theirs, only
	// where it is missing, so the migration is idempotent. It keeps
	// binaries that would write documents without it, which the quotas
	// would not count, from opening the database.
	{version: 10, name: "usage bytes", up: setMissingBytes},
}

// setMissingUpstreamKind gives the upstream definitions without a kind
// the kind of MCP upstreams, which they all were before version 9.
func setMissingUpstreamKind(ctx context.Context, db *mongo.Database) error {
	_, err := db.Collection(colUpstreams).UpdateMany(ctx,
		bson.D{{Key: "kind", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "kind", Value: agentsmcp.UpstreamKindMCP}}}})
	if err != nil {
		return fmt.Errorf("set the kind of upstream definitions: %w", err)
	}
	return nil
}

// seedOutcomeWeights gives the tool_performance documents without outcome
// weights their counts as weights, as of their last call. FerretDB has no
// update pipelines ($subtract), so each document is read and updated on
// the condition that it still has no weights.
func seedOutcomeWeights(ctx context.Context, db *mongo.Database) error {
	col := db.Collection(colToolPerf)
	noWeights := bson.D{{Key: "weightEpoch", Value: bson.D{{Key: "$exists", Value: false}}}}
	cur, err := col.Find(ctx, noWeights)
	if err != nil {
		return fmt.Errorf("read tool performance: %w", err)
	}
	var docs []toolPerfDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read tool performance: %w", err)
	}
	for _, d := range docs {
		filter := append(bson.D{{Key: "_id", Value: d.Tool}}, noWeights...)
		_, err := col.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
			{Key: "successWeight", Value: float64(d.Calls - d.Errors)},
			{Key: "failureWeight", Value: float64(d.Errors)},
			{Key: "weightEpoch", Value: d.LastCallAt},
		}}})
		if err != nil {
			return fmt.Errorf("seed the outcome weights of %s: %w", d.Tool, err)
		}
	}
	return nil
}

// setMissingPrincipal gives the memory documents that have no principal
// the anonymous one.
func setMissingPrincipal(ctx context.Context, db *mongo.Database) error {
	for _, col := range []string{colInsights, colLearnings, colPatterns} {
		_, err := db.Collection(col).UpdateMany(ctx,
			bson.D{{Key: "principal", Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "principal", Value: agentsmcp.AnonymousPrincipal}}}})
		if err != nil {
			return fmt.Errorf("set the principal of %s: %w", col, err)
		}
	}
	return nil
}

// index is one index of the current layout. Every index has an explicit
// name: index names are how ensureIndexes recognises what exists.
//
// No index is declared unique: everything the contracts need unique (an
// insight's or learning's ID, a tool name, a pattern's (goal, steps) key)
// is the document's _id, whose index is unique already, on FerretDB too.
type index struct {
	collection string
	name       string
	keys       bson.D
}

// indexes of the current layout. The list pages and filters of the Find*
// methods each have a compound index ending in their sort key, so that on
// MongoDB a page is an index range scan; the words_* indexes are multikey
// and serve text filters (see text.go). FerretDB creates them all but uses
// none but _id; see bench_test.go.
var indexes = []index{
	{colInsights, "createdAt_id", bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colInsights, "type_createdAt_id", bson.D{{Key: "type", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colInsights, "appliesTo_createdAt_id", bson.D{{Key: "appliesTo", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colInsights, "principal_createdAt_id", bson.D{{Key: "principal", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colInsights, "words_createdAt_id", bson.D{{Key: "words", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},

	{colLearnings, "createdAt_id", bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colLearnings, "tools_createdAt_id", bson.D{{Key: "tools", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colLearnings, "upstreams_createdAt_id", bson.D{{Key: "upstreams", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colLearnings, "outcome_createdAt_id", bson.D{{Key: "outcome", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colLearnings, "principal_createdAt_id", bson.D{{Key: "principal", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colLearnings, "words_createdAt_id", bson.D{{Key: "words", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},

	{colToolPerf, "calls_id", bson.D{{Key: "calls", Value: -1}, {Key: "_id", Value: 1}}},

	{colPatterns, "successes_id", bson.D{{Key: "successes", Value: -1}, {Key: "_id", Value: -1}}},
	{colPatterns, "principal_successes_id", bson.D{{Key: "principal", Value: 1}, {Key: "successes", Value: -1}, {Key: "_id", Value: -1}}},
	{colPatterns, "words_successes_id", bson.D{{Key: "words", Value: 1}, {Key: "successes", Value: -1}, {Key: "_id", Value: -1}}},

	{colThoughts, "createdAt_id", bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colThoughts, "principal_createdAt_id", bson.D{{Key: "principal", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colThoughts, "words_createdAt_id", bson.D{{Key: "words", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},

	{colPlans, "createdAt_id", bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colPlans, "principal_createdAt_id", bson.D{{Key: "principal", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colPlans, "thoughtId_createdAt_id", bson.D{{Key: "thoughtId", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},

	{colTasks, "createdAt_id", bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	// Also FindTasksToResume's: status $in, read backwards for oldest first.
	{colTasks, "status_createdAt_id", bson.D{{Key: "status", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colTasks, "principal_createdAt_id", bson.D{{Key: "principal", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colTasks, "planId_createdAt_id", bson.D{{Key: "planId", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	// DeleteEndedTasks: the ended tasks, earliest ended first. A task that
	// has not ended has no endedAt, and sorts before every ended one.
	{colTasks, "endedAt_id", bson.D{{Key: "endedAt", Value: 1}, {Key: "_id", Value: 1}}},

	{colOutbox, "nextAttemptAt_id", bson.D{{Key: "nextAttemptAt", Value: 1}, {Key: "_id", Value: 1}}},
	{colOutbox, "createdAt", bson.D{{Key: "createdAt", Value: 1}}},

	// The call counters' sweep of expired ones.
	{colCallCounters, "expiresAt", bson.D{{Key: "expiresAt", Value: 1}}},

	// The audit trail: one index per filter, and createdAt_id also serves
	// retention's deleteMany by time. No TTL index: FerretDB has none, and
	// the retention period is a setting that may change.
	{colAudit, "createdAt_id", bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colAudit, "principal_createdAt_id", bson.D{{Key: "principal", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colAudit, "kind_createdAt_id", bson.D{{Key: "kind", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colAudit, "target_createdAt_id", bson.D{{Key: "target", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colAudit, "outcome_createdAt_id", bson.D{{Key: "outcome", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
	{colAudit, "requestId_createdAt_id", bson.D{{Key: "requestId", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}},
}

// migrate checks the stored schema version, ensures the indexes, runs the
// migrations the database has not seen, and records the new version.
func (db *DB) migrate(ctx context.Context) error { return db.migrateWith(ctx, migrations) }

// migrateWith is migrate with a given list of migrations, whose last
// version is the latest the caller knows.
func (db *DB) migrateWith(ctx context.Context, migrations []migration) error {
	latest := migrations[len(migrations)-1].version
	version, err := db.schemaVersion(ctx)
	if err != nil {
		return err
	}
	if version > latest {
		return fmt.Errorf("%w: database is at version %d, this binary knows up to %d", ErrSchemaTooNew, version, latest)
	}
	if err := db.ensureIndexes(ctx); err != nil {
		return err
	}
	for _, m := range migrations {
		if m.version <= version {
			continue
		}
		if err := m.up(ctx, db.db); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		if err := db.setSchemaVersion(ctx, version, m.version); err != nil {
			return err
		}
		version = m.version
	}
	return nil
}

// schemaVersion reads the stored version; 0 for a database never prepared.
func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	var meta struct {
		Version int `bson:"version"`
	}
	err := db.db.Collection(colSchemaMeta).FindOne(ctx, bson.D{{Key: "_id", Value: "schema"}}).Decode(&meta)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return meta.Version, nil
}

// setSchemaVersion moves the version from old to new as a compare-and-set,
// so that a replica that migrated further is never moved back.
func (db *DB) setSchemaVersion(ctx context.Context, old, new int) error {
	col := db.db.Collection(colSchemaMeta)
	if old == 0 {
		_, err := col.InsertOne(ctx, bson.D{{Key: "_id", Value: "schema"}, {Key: "version", Value: new}})
		if err == nil || mongo.IsDuplicateKeyError(err) { // another replica got there first
			return nil
		}
		return fmt.Errorf("record schema version %d: %w", new, err)
	}
	_, err := col.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: "schema"}, {Key: "version", Value: old}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: new}}}})
	if err != nil {
		return fmt.Errorf("record schema version %d: %w", new, err)
	}
	return nil
}

// ensureIndexes creates the indexes of the current layout that do not exist
// yet. It is idempotent and cheap when nothing is missing: one listIndexes
// per collection.
//
// It creates one index per command rather than all of a collection's in one
// createIndexes, because FerretDB 1.24 mishandles a batch that holds two or
// more indexes that already exist (it drops them from the batch by their
// original position, which panics or skips the wrong index), and a
// concurrent replica can create them between our list and our create. An
// index that exists already is a no-op for a single-index command, on both
// servers.
func (db *DB) ensureIndexes(ctx context.Context) error {
	existing := map[string]map[string]bool{}
	for _, ix := range indexes {
		names, ok := existing[ix.collection]
		if !ok {
			specs, err := db.db.Collection(ix.collection).Indexes().ListSpecifications(ctx)
			if err != nil && !isNamespaceNotFound(err) {
				return fmt.Errorf("list indexes of %s: %w", ix.collection, err)
			}
			names = map[string]bool{}
			for _, s := range specs {
				names[s.Name] = true
			}
			existing[ix.collection] = names
		}
		if names[ix.name] {
			continue
		}
		model := mongo.IndexModel{Keys: ix.keys, Options: options.Index().SetName(ix.name)}
		if _, err := db.db.Collection(ix.collection).Indexes().CreateOne(ctx, model); err != nil {
			return fmt.Errorf("create index %s of %s: %w", ix.name, ix.collection, err)
		}
	}
	return nil
}

// isNamespaceNotFound reports the error of listing the indexes of a
// collection that does not exist yet (MongoDB code 26).
func isNamespaceNotFound(err error) bool {
	var ce mongo.CommandError
	return errors.As(err, &ce) && (ce.Code == 26 || ce.Name == "NamespaceNotFound")
}
