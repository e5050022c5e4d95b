// Package wirepb is Pinecone's data-plane protocol (VectorService, API
// version 2025-10) compiled for the test server of package pineconetest:
// messages and server stubs generated from the proto file Pinecone
// publishes, kept in ../spec with its licence. go-pinecone's own stubs are
// internal to its module, hence these.
//
// The proto package is pineconewire, not Pinecone's empty one (see gen.sh);
// register the service with [ServiceDesc], which carries Pinecone's name.
package wirepb

//go:generate sh gen.sh
