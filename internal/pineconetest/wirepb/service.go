package wirepb

import "google.golang.org/grpc"

// ServiceName is the name Pinecone's clients call the data plane by: the
// published proto declares no package.
const ServiceName = "VectorService"

// Register registers srv with s under [ServiceName], where Pinecone's
// clients look for it (the generated VectorService_ServiceDesc carries the
// package-qualified name of the compiled copy, which no client calls).
func Register(s grpc.ServiceRegistrar, srv VectorServiceServer) {
	desc := VectorService_ServiceDesc
	desc.ServiceName = ServiceName
	s.RegisterService(&desc, srv)
}
