package redact

import (
	"maps"
	"slices"
	"strings"
)

// Fields describes a value as "k=v" pairs joined by spaces, from kv (keys
// and values alternating), leaving out the pairs whose value is empty. The
// caller redacts the values first ([URL], [Keys]).
func Fields(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			parts = append(parts, kv[i]+"="+kv[i+1])
		}
	}
	return strings.Join(parts, " ")
}

// Keys describes m by its keys alone, sorted, each with [Marker] for its
// value: "Authorization:[REDACTED],X-Key:[REDACTED]".
func Keys(m map[string]string) string {
	kv := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+":"+Marker)
	}
	return strings.Join(kv, ",")
}
