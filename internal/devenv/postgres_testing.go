package devenv

import (
	"context"
	"database/sql"
	"testing"
)

// NewPostgres starts a private PostgreSQL server for the test and
// registers its Close with t.Cleanup.
func NewPostgres(t testing.TB) *Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	p, err := StartPostgres(ctx)
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("devenv: %v", err)
		}
	})
	return p
}

// CreatePostgresDatabase creates database name and returns a handle to
// it, closed on cleanup.
func CreatePostgresDatabase(t testing.TB, p *Postgres, name string) *sql.DB {
	t.Helper()
	root, err := p.DB("postgres")
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	defer root.Close()
	if _, err := root.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		t.Fatalf("devenv: creating database %q on %s: %v", name, p.Addr(), err)
	}
	db, err := p.DB(name)
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
