package seal

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type payload struct {
	Task string `json:"task"`
}

// TestOpenRefusesWhatWasNotSealed: a token opens only unchanged, under the
// key and label that sealed it, and before it expires; an expired token
// still says what it held.
func TestOpenRefusesWhatWasNotSealed(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := &Sealer{Key: []byte(strings.Repeat("k", KeySize)), Now: func() time.Time { return now }}
	token, err := s.Seal("use-a", payload{Task: "t1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var got payload
	if exp, err := s.Open("use-a", token, &got); err != nil || got.Task != "t1" || !exp.Equal(now.Add(time.Minute)) {
		t.Fatalf("Open = %v, %+v, %v", exp, got, err)
	}
	body, mac, _ := strings.Cut(token, ".")
	flip := func(s string, i int) string {
		c := byte('A')
		if s[i] == 'A' {
			c = 'B'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	later := &Sealer{Key: s.Key, Now: func() time.Time { return now.Add(time.Minute) }}
	for _, tc := range []struct {
		name, label, token string
		s                  *Sealer
		want               error
	}{
		{"payload changed", "use-a", flip(body, len(body)/2) + "." + mac, s, ErrForged},
		{"mac changed", "use-a", body + "." + flip(mac, 3), s, ErrForged},
		{"no mac", "use-a", body, s, ErrForged},
		{"another label", "use-b", token, s, ErrForged},
		{"another key", "use-a", token, &Sealer{Key: []byte(strings.Repeat("o", KeySize)), Now: s.Now}, ErrForged},
		{"no key", "use-a", token, &Sealer{Now: s.Now}, ErrForged},
		{"expired", "use-a", token, later, ErrExpired},
	} {
		var p payload
		_, err := tc.s.Open(tc.label, tc.token, &p)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if tc.want == ErrExpired && p.Task != "t1" {
			t.Errorf("expired: value = %+v, want the authentic payload", p)
		}
	}
	// A payload of the wrong shape, sealed honestly, is malformed.
	odd, _ := s.Seal("use-a", []int{1}, time.Minute)
	if _, err := s.Open("use-a", odd, &payload{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("wrong shape: err = %v, want ErrMalformed", err)
	}
	if _, err := (&Sealer{}).Seal("use-a", 1, time.Minute); err == nil {
		t.Error("Seal without a key succeeded")
	}
}

func TestDigestSeparatesParts(t *testing.T) {
	if Digest("ab", "c") == Digest("a", "bc") {
		t.Error("Digest does not separate its parts")
	}
	first, again := Digest("a"), Digest("a")
	if first != again || len(first) != 22 {
		t.Errorf("Digest = %q then %q, want 22 stable characters", first, again)
	}
}
