// Package memory will hold the storage and vector-memory implementations of
// the root package's interfaces (SQLite embedded, MongoDB in production).
package memory
