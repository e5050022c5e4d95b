package sqlite

import (
	"context"
	"fmt"
	"strings"
)

// rawCredentials dumps every column of the credential tables as text, for
// the suite's check that no secret is stored in clear.
func (db *DB) rawCredentials(ctx context.Context) (string, error) {
	var b strings.Builder
	for _, table := range []string{"credentials", "oauth_states"} {
		rows, err := db.writer.QueryContext(ctx, "SELECT * FROM "+table)
		if err != nil {
			return "", err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			fmt.Fprintf(&b, "%s: %v\n", table, vals)
		}
		if err := rows.Close(); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
