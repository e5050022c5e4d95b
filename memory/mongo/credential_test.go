package mongo

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// rawCredentials dumps every document of the credential collections as
// extended JSON, for the suite's check that no secret is stored in clear.
func (db *DB) rawCredentials(ctx context.Context) (string, error) {
	var b strings.Builder
	for _, col := range []string{colCredentials, colOAuthStates} {
		cur, err := db.db.Collection(col).Find(ctx, bson.D{})
		if err != nil {
			return "", err
		}
		var docs []bson.M
		if err := cur.All(ctx, &docs); err != nil {
			return "", err
		}
		for _, d := range docs {
			j, err := bson.MarshalExtJSON(d, false, false)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s: %s\n", col, j)
		}
	}
	return b.String(), nil
}
