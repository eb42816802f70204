package devenv

import "testing"

func TestPostgresStarts(t *testing.T) {
	p := NewPostgres(t)
	db := CreatePostgresDatabase(t, p, "shop")
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
