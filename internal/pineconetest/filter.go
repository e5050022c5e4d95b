package pineconetest

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// matchFilter reports whether metadata satisfies a Pinecone metadata
// filter, or why the filter is invalid. The language is Pinecone's
// (docs.pinecone.io, "Filter by metadata"): a document of conditions that
// must all hold, each either {"field": {"$op": value}}, the shorthand
// {"field": value} for $eq, or {"$and"|"$or": [filters]}. Operators:
// $eq, $ne, $gt, $gte, $lt, $lte on strings, numbers and booleans as
// Pinecone allows them ($gt… on numbers only); $in, $nin on lists of
// strings or numbers; $exists on a boolean. A list-valued metadata field
// matches $eq/$in when any element does, and $ne/$nin when none does.
func matchFilter(filter *structpb.Struct, md *structpb.Struct) (bool, error) {
	if filter == nil {
		return true, nil
	}
	for key, cond := range filter.GetFields() {
		ok, err := matchClause(key, cond, md)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matchClause(key string, cond *structpb.Value, md *structpb.Struct) (bool, error) {
	switch key {
	case "$and", "$or":
		list := cond.GetListValue()
		if list == nil || len(list.Values) == 0 {
			return false, fmt.Errorf("%s must be a non-empty array of filters", key)
		}
		for _, sub := range list.Values {
			s := sub.GetStructValue()
			if s == nil {
				return false, fmt.Errorf("%s must hold objects", key)
			}
			ok, err := matchFilter(s, md)
			if err != nil {
				return false, err
			}
			if key == "$or" && ok {
				return true, nil
			}
			if key == "$and" && !ok {
				return false, nil
			}
		}
		return key == "$and", nil
	}
	if strings.HasPrefix(key, "$") {
		return false, fmt.Errorf("unknown top-level operator %q", key)
	}
	field, present := md.GetFields()[key]
	ops := cond.GetStructValue()
	if ops == nil {
		// {"field": value} is {"field": {"$eq": value}}.
		return matchOp("$eq", cond, field, present)
	}
	if len(ops.Fields) == 0 {
		return false, fmt.Errorf("field %q has an empty condition", key)
	}
	for op, arg := range ops.Fields {
		ok, err := matchOp(op, arg, field, present)
		if err != nil {
			return false, fmt.Errorf("field %q: %w", key, err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

func matchOp(op string, arg, field *structpb.Value, present bool) (bool, error) {
	switch op {
	case "$exists":
		b, ok := arg.GetKind().(*structpb.Value_BoolValue)
		if !ok {
			return false, fmt.Errorf("$exists needs a boolean")
		}
		return present == b.BoolValue, nil
	case "$eq", "$ne":
		if !scalar(arg) {
			return false, fmt.Errorf("%s needs a string, number or boolean", op)
		}
		hit := present && anyElement(field, func(v *structpb.Value) bool { return equal(v, arg) })
		return hit == (op == "$eq"), nil
	case "$in", "$nin":
		list := arg.GetListValue()
		if list == nil {
			return false, fmt.Errorf("%s needs an array", op)
		}
		for _, a := range list.Values {
			if !scalar(a) {
				return false, fmt.Errorf("%s needs an array of strings, numbers or booleans", op)
			}
		}
		hit := present && anyElement(field, func(v *structpb.Value) bool {
			return slices.ContainsFunc(list.Values, func(a *structpb.Value) bool { return equal(v, a) })
		})
		return hit == (op == "$in"), nil
	case "$gt", "$gte", "$lt", "$lte":
		n, ok := arg.GetKind().(*structpb.Value_NumberValue)
		if !ok {
			return false, fmt.Errorf("%s needs a number", op)
		}
		f, ok := field.GetKind().(*structpb.Value_NumberValue)
		if !present || !ok {
			return false, nil
		}
		x, y := f.NumberValue, n.NumberValue
		switch op {
		case "$gt":
			return x > y, nil
		case "$gte":
			return x >= y, nil
		case "$lt":
			return x < y, nil
		default:
			return x <= y, nil
		}
	}
	return false, fmt.Errorf("unknown operator %q", op)
}

func scalar(v *structpb.Value) bool {
	switch v.GetKind().(type) {
	case *structpb.Value_StringValue, *structpb.Value_NumberValue, *structpb.Value_BoolValue:
		return true
	}
	return false
}

// anyElement applies f to a scalar field, or to each element of a list
// field.
func anyElement(field *structpb.Value, f func(*structpb.Value) bool) bool {
	if l := field.GetListValue(); l != nil {
		return slices.ContainsFunc(l.Values, f)
	}
	return f(field)
}

func equal(a, b *structpb.Value) bool {
	switch x := a.GetKind().(type) {
	case *structpb.Value_StringValue:
		y, ok := b.GetKind().(*structpb.Value_StringValue)
		return ok && x.StringValue == y.StringValue
	case *structpb.Value_NumberValue:
		y, ok := b.GetKind().(*structpb.Value_NumberValue)
		return ok && x.NumberValue == y.NumberValue
	case *structpb.Value_BoolValue:
		y, ok := b.GetKind().(*structpb.Value_BoolValue)
		return ok && x.BoolValue == y.BoolValue
	}
	return false
}
