package kafka

import "context"

// OpenShadow creates and opens a session that writes no checkpoint
// (NoCheckpoint) with the one transactional id txnID, for a replay or a
// recovery: opening it fences an earlier session of the id and aborts
// its open transaction. pc.Log is replaced by one naming the id. On
// error nothing was produced and the session is closed.
func OpenShadow(ctx context.Context, pc Config, txnID string) (*Session, error) {
	log := pc.Log.With().Str("transactional_id", txnID).Logger()
	pc.Log = log
	s, err := NewSession(SessionConfig{Producer: pc, TransactionalIDs: []string{txnID}, NoCheckpoint: true, Log: log})
	if err != nil {
		return nil, err
	}
	if _, err := s.Open(ctx); err != nil {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Close(done)
		return nil, err
	}
	return s, nil
}
