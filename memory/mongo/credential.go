package mongo

import (
	"context"
	"encoding/json"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var _ agentsmcp.CredentialService = (*DB)(nil)

// colCredentials holds one document per [agentsmcp.Credential]. Its _id is
// the scope key (integration, principal), not the credential's ID: the
// unique _id index is what keeps one credential per scope (see index: no
// other index is unique), and it serves the lookup of every call. The ID
// is a field, read by the admin API only, over a collection that stays
// small.
const colCredentials = "credentials"

// colOAuthStates holds one document per authorization flow under way,
// _id = the hash of its state; taken with findOneAndDelete.
const colOAuthStates = "oauth_states"

// credentialIDPrefix is the id prefix of a Credential.
const credentialIDPrefix = "cred"

// credentialDoc is the stored form of a Credential: the secret part only
// sealed, the settings as JSON text.
type credentialDoc struct {
	Key         string    `bson:"_id"`
	ID          string    `bson:"id"`
	Integration string    `bson:"integration"`
	Principal   string    `bson:"principal"`
	Kind        string    `bson:"kind"`
	Settings    string    `bson:"settings"`
	Sealed      string    `bson:"sealed"`
	ExpiresAt   time.Time `bson:"expiresAt,omitempty"`
	CreatedBy   string    `bson:"createdBy"`
	CreatedAt   time.Time `bson:"createdAt"`
	UpdatedAt   time.Time `bson:"updatedAt"`
}

// credentialKey is the _id of the credential of (integration, principal):
// a JSON array, so that no pair of strings maps to another pair's key.
func credentialKey(integration, principal string) string {
	b, _ := json.Marshal([]string{integration, principal}) // strings cannot fail
	return string(b)
}

func (d *credentialDoc) credential() (*agentsmcp.Credential, error) {
	c := &agentsmcp.Credential{ID: d.ID, Integration: d.Integration, Principal: d.Principal, Kind: d.Kind,
		Sealed: d.Sealed, CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	if !d.ExpiresAt.IsZero() {
		c.ExpiresAt = d.ExpiresAt.UTC()
	}
	if err := json.Unmarshal([]byte(d.Settings), &c.Settings); err != nil {
		return nil, wrap(err, "credential "+d.ID+" settings")
	}
	return c, nil
}

// CreateCredential implements [agentsmcp.CredentialService].
func (db *DB) CreateCredential(ctx context.Context, c *agentsmcp.Credential) error {
	if err := validate.StoredCredential(c); err != nil {
		return err
	}
	settings, err := json.Marshal(c.Settings)
	if err != nil {
		return wrap(err, "credential settings")
	}
	now := db.nowMs()
	doc := credentialDoc{Key: credentialKey(c.Integration, c.Principal), ID: agentsmcp.NewID(credentialIDPrefix),
		Integration: c.Integration, Principal: c.Principal, Kind: c.Kind, Settings: string(settings), Sealed: c.Sealed,
		CreatedBy: c.CreatedBy, CreatedAt: now, UpdatedAt: now}
	if !c.ExpiresAt.IsZero() {
		doc.ExpiresAt = ms(c.ExpiresAt)
	}
	if _, err := db.db.Collection(colCredentials).InsertOne(ctx, &doc); err != nil {
		if agentsmcp.ErrorCode(wrap(err, "")) == agentsmcp.ECONFLICT {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "a credential for %q and this principal already exists", c.Integration)
		}
		return wrap(err, "credential for "+c.Integration)
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.ExpiresAt = doc.ID, now, now, doc.ExpiresAt
	return nil
}

func (db *DB) findCredential(ctx context.Context, filter bson.D, what string) (*agentsmcp.Credential, error) {
	var doc credentialDoc
	if err := db.db.Collection(colCredentials).FindOne(ctx, filter).Decode(&doc); err != nil {
		return nil, wrap(err, what)
	}
	return doc.credential()
}

// FindCredential implements [agentsmcp.CredentialService].
func (db *DB) FindCredential(ctx context.Context, integration, principal string) (*agentsmcp.Credential, error) {
	return db.findCredential(ctx, bson.D{{Key: "_id", Value: credentialKey(integration, principal)}}, "credential for "+integration)
}

// FindCredentialByID implements [agentsmcp.CredentialService].
func (db *DB) FindCredentialByID(ctx context.Context, id string) (*agentsmcp.Credential, error) {
	return db.findCredential(ctx, bson.D{{Key: "id", Value: id}}, "credential "+id)
}

// FindCredentials implements [agentsmcp.CredentialService].
func (db *DB) FindCredentials(ctx context.Context, f agentsmcp.CredentialFilter) ([]*agentsmcp.Credential, error) {
	filter := bson.D{}
	if f.Integration != "" {
		filter = append(filter, bson.E{Key: "integration", Value: f.Integration})
	}
	if f.Principal != nil {
		filter = append(filter, bson.E{Key: "principal", Value: *f.Principal})
	}
	cur, err := db.db.Collection(colCredentials).Find(ctx, filter,
		options.Find().SetSort(bson.D{{Key: "integration", Value: 1}, {Key: "principal", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list credentials")
	}
	var docs []credentialDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list credentials")
	}
	items := make([]*agentsmcp.Credential, 0, len(docs))
	for i := range docs {
		c, err := docs[i].credential()
		if err != nil {
			return nil, err
		}
		items = append(items, c)
	}
	return items, nil
}

// UpdateCredentialSecret implements [agentsmcp.CredentialService].
func (db *DB) UpdateCredentialSecret(ctx context.Context, id, sealed string, expiresAt time.Time) error {
	if sealed == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %s: its secret must be sealed before it is stored", id)
	}
	set := bson.D{{Key: "sealed", Value: sealed}, {Key: "updatedAt", Value: db.nowMs()}}
	update := bson.D{{Key: "$set", Value: set}}
	if expiresAt.IsZero() {
		update = append(update, bson.E{Key: "$unset", Value: bson.D{{Key: "expiresAt", Value: ""}}})
	} else {
		update[0].Value = append(set, bson.E{Key: "expiresAt", Value: ms(expiresAt)})
	}
	res, err := db.db.Collection(colCredentials).UpdateOne(ctx, bson.D{{Key: "id", Value: id}}, update)
	if err != nil {
		return wrap(err, "update credential "+id)
	}
	if res.MatchedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "credential %q not found", id)
	}
	return nil
}

// DeleteCredential implements [agentsmcp.CredentialService].
func (db *DB) DeleteCredential(ctx context.Context, id string) error {
	res, err := db.db.Collection(colCredentials).DeleteOne(ctx, bson.D{{Key: "id", Value: id}})
	if err != nil {
		return wrap(err, "delete credential "+id)
	}
	if res.DeletedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "credential %q not found", id)
	}
	return nil
}

type oauthStateDoc struct {
	Key          string    `bson:"_id"`
	CredentialID string    `bson:"credentialId"`
	Principal    string    `bson:"principal"`
	Binding      string    `bson:"binding,omitempty"`
	Sealed       string    `bson:"verifierSealed"`
	ExpiresAt    time.Time `bson:"expiresAt"`
}

// CreateOAuthState implements [agentsmcp.CredentialService]. It also
// drops the states that expired, so that abandoned flows do not pile up.
func (db *DB) CreateOAuthState(ctx context.Context, s *agentsmcp.OAuthState) error {
	if s == nil || s.Key == "" || s.CredentialID == "" || s.ExpiresAt.IsZero() {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "oauth state: key, credential and expiry are required")
	}
	if s.Verifier != "" || s.Sealed == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "oauth state: its verifier must be sealed before it is stored")
	}
	col := db.db.Collection(colOAuthStates)
	if _, err := col.DeleteMany(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: db.nowMs()}}}}); err != nil {
		return wrap(err, "drop expired oauth states")
	}
	doc := oauthStateDoc{Key: s.Key, CredentialID: s.CredentialID, Principal: s.Principal, Binding: s.Binding,
		Sealed: s.Sealed, ExpiresAt: ms(s.ExpiresAt)}
	if _, err := col.InsertOne(ctx, &doc); err != nil {
		return wrap(err, "oauth state")
	}
	return nil
}

// FindOAuthState implements [agentsmcp.CredentialService].
func (db *DB) FindOAuthState(ctx context.Context, key string, at time.Time) (*agentsmcp.OAuthState, error) {
	var doc oauthStateDoc
	if err := db.db.Collection(colOAuthStates).FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&doc); err != nil {
		return nil, wrap(err, "oauth state")
	}
	return doc.at(at)
}

// TakeOAuthState implements [agentsmcp.CredentialService]: one
// findOneAndDelete, so two callbacks with the same state cannot both take
// it.
func (db *DB) TakeOAuthState(ctx context.Context, key string, at time.Time) (*agentsmcp.OAuthState, error) {
	var doc oauthStateDoc
	if err := db.db.Collection(colOAuthStates).FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&doc); err != nil {
		return nil, wrap(err, "oauth state")
	}
	return doc.at(at)
}

// at is the state of doc as of at: ENOTFOUND when it expired before at.
func (doc *oauthStateDoc) at(at time.Time) (*agentsmcp.OAuthState, error) {
	if doc.ExpiresAt.Before(at) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "oauth state: not found")
	}
	return &agentsmcp.OAuthState{Key: doc.Key, CredentialID: doc.CredentialID, Principal: doc.Principal,
		Binding: doc.Binding, Sealed: doc.Sealed, ExpiresAt: doc.ExpiresAt.UTC()}, nil
}
