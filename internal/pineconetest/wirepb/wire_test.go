package wirepb

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	_ "github.com/pinecone-io/go-pinecone/v5/pinecone" // registers the descriptor go-pinecone was generated from
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestSameProtocolAsGoPinecone compares what gets on the wire in the
// compiled copy with the descriptor go-pinecone v5 registers for
// db_data_2025-10.proto: every message with every field (number, name,
// kind, cardinality, type, oneof), every enum value, every method of the
// service with its request and response types. A field missing, renumbered
// or retyped by gen.sh's edits, or a go-pinecone upgrade to another API
// version, fails here.
func TestSameProtocolAsGoPinecone(t *testing.T) {
	theirs, err := protoregistry.GlobalFiles.FindFileByPath("db_data_2025-10.proto")
	if err != nil {
		t.Fatalf("go-pinecone registers no db_data_2025-10.proto (another API version? regenerate from its proto): %v", err)
	}
	ours := File_pineconewire_db_data_2025_10_proto
	want, got := shape(theirs), shape(ours)
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("missing from the compiled copy: %s", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("not in go-pinecone's protocol: %s", l)
		}
	}
	if len(want) < 100 {
		t.Errorf("only %d lines describe go-pinecone's protocol; the walk is broken", len(want))
	}
	if s := theirs.Services().ByName(ServiceName); s == nil {
		t.Errorf("go-pinecone's file has no service %q", ServiceName)
	}
}

// shape lists a file's wire-relevant declarations, one per line, with
// names relative to the file's package.
func shape(f protoreflect.FileDescriptor) []string {
	pkg := string(f.Package())
	rel := func(n protoreflect.FullName) string {
		s := string(n)
		if pkg != "" && strings.HasPrefix(s, pkg+".") {
			return s[len(pkg)+1:]
		}
		return s
	}
	var out []string
	var messages func(ms protoreflect.MessageDescriptors)
	messages = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			out = append(out, "message "+rel(m.FullName()))
			for j := range m.Fields().Len() {
				fd := m.Fields().Get(j)
				typ := fd.Kind().String()
				switch {
				case fd.Message() != nil:
					typ = rel(fd.Message().FullName())
				case fd.Enum() != nil:
					typ = rel(fd.Enum().FullName())
				}
				oneof := ""
				if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
					oneof = " oneof " + string(o.Name())
				}
				out = append(out, fmt.Sprintf("field %s.%s = %d %s %s packed=%v presence=%v%s",
					rel(m.FullName()), fd.Name(), fd.Number(), fd.Cardinality(), typ, fd.IsPacked(), fd.HasPresence(), oneof))
			}
			for j := range m.Enums().Len() {
				enum(rel, m.Enums().Get(j), &out)
			}
			messages(m.Messages())
		}
	}
	messages(f.Messages())
	for i := range f.Enums().Len() {
		enum(rel, f.Enums().Get(i), &out)
	}
	for i := range f.Services().Len() {
		s := f.Services().Get(i)
		for j := range s.Methods().Len() {
			m := s.Methods().Get(j)
			out = append(out, fmt.Sprintf("rpc %s.%s(%s) returns (%s) stream=%v/%v", s.Name(), m.Name(),
				rel(m.Input().FullName()), rel(m.Output().FullName()), m.IsStreamingClient(), m.IsStreamingServer()))
		}
	}
	return out
}

func enum(rel func(protoreflect.FullName) string, e protoreflect.EnumDescriptor, out *[]string) {
	for i := range e.Values().Len() {
		v := e.Values().Get(i)
		*out = append(*out, fmt.Sprintf("enum %s.%s = %d", rel(e.FullName()), v.Name(), v.Number()))
	}
}
