package harness

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// KafkaProxy forwards TCP connections to one Kafka listener and can act
// when a request of a given API key passes through: run a function (kill
// the router, stop the broker) before the request is forwarded, and then
// forward it, drop the connection instead, or forward it and drop the
// connection before the response comes back. The broker must advertise the
// proxy's address on that listener (devenv.ApacheKafkaConfig.Advertise):
// a client that bootstraps through the proxy then stays behind it. It is
// the Apache Kafka counterpart of kfake's ControlKey for the requests of
// the clients that connect through it.
type KafkaProxy struct {
	ln net.Listener

	mu     sync.Mutex
	target string
	traps  []*ProxyTrap
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ProxyTrap is one armed action: f runs for the next request of key
// (that match accepts, if set).
type ProxyTrap struct {
	key   kmsg.Key
	match func(kmsg.Request) bool
	f     func() ProxyAction
	hit   chan struct{} // closed once f returned
}

// ProxyAction is what happens to a trapped request after its trap ran.
type ProxyAction int

const (
	Forward     ProxyAction = iota // the broker gets it, the client its response
	Drop                           // the connection closes; the broker never sees it
	ForwardDrop                    // the broker gets it; the connection closes before its response
)

// newKafkaProxy listens on a free loopback port; its target is set later
// (setTarget), once the broker's listener is known.
func newKafkaProxy() (*KafkaProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &KafkaProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *KafkaProxy) addr() string { return p.ln.Addr().String() }

func (p *KafkaProxy) setTarget(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = addr
}

// At arms f to run, once, when the next request of key arrives, before
// it is forwarded; f returns what to do with the request.
func (p *KafkaProxy) At(key kmsg.Key, f func() ProxyAction) *ProxyTrap {
	return p.AtRequest(key, nil, f)
}

// AtRequest is At for the next request of key that match accepts (every
// one when match is nil); the request is decoded for match, which must
// not keep it.
func (p *KafkaProxy) AtRequest(key kmsg.Key, match func(kmsg.Request) bool, f func() ProxyAction) *ProxyTrap {
	tr := &ProxyTrap{key: key, match: match, f: f, hit: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.traps = append(p.traps, tr)
	return tr
}

// disarm removes tr if it has not fired; it reports whether it removed it
// (false: f runs or ran).
func (p *KafkaProxy) disarm(tr *ProxyTrap) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.traps {
		if x == tr {
			p.traps = append(p.traps[:i], p.traps[i+1:]...)
			return true
		}
	}
	return false
}

// Wait waits until tr fired or timeout passed, then disarms it; it
// reports whether it fired.
func (p *KafkaProxy) Wait(tr *ProxyTrap, timeout time.Duration) bool {
	select {
	case <-tr.hit:
		return true
	case <-time.After(timeout):
	}
	if p.disarm(tr) {
		return false
	}
	<-tr.hit
	return true
}

// take removes and returns the first trap armed for frame's request, or
// nil.
func (p *KafkaProxy) take(frame []byte) *ProxyTrap {
	key := int16(binary.BigEndian.Uint16(frame[4:6]))
	p.mu.Lock()
	defer p.mu.Unlock()
	var req kmsg.Request // decoded once, for the first trap that asks
	for i, tr := range p.traps {
		if int16(tr.key) != key {
			continue
		}
		if tr.match != nil {
			if req == nil {
				var err error
				if req, err = decodeRequest(frame); err != nil {
					continue
				}
			}
			if !tr.match(req) {
				continue
			}
		}
		p.traps = append(p.traps[:i], p.traps[i+1:]...)
		return tr
	}
	return nil
}

// reset disarms every trap.
func (p *KafkaProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.traps = nil
}

func (p *KafkaProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *KafkaProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *KafkaProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

func (p *KafkaProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve forwards one client connection: responses are copied as they
// come, requests frame by frame so that traps see each one.
func (p *KafkaProxy) serve(client net.Conn) {
	defer client.Close()
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	if target == "" || !p.track(client) {
		return
	}
	defer p.untrack(client)
	broker, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		// The node is down. A client dialing it would be refused; the
		// nearest a listener that accepted can come is a reset. A plain
		// close would read as an EOF before the first response, which
		// franz-go takes for a TLS mismatch and does not retry.
		if tc, ok := client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		return
	}
	if !p.track(broker) {
		broker.Close()
		return
	}
	defer p.untrack(broker)
	defer broker.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(client, broker)
		client.Close()
	}()
	for {
		frame, err := readFrame(client)
		if err != nil {
			return
		}
		if len(frame) >= 6 {
			if tr := p.take(frame); tr != nil {
				action := tr.f()
				close(tr.hit)
				switch action {
				case Drop:
					return
				case ForwardDrop:
					// The client goes; the broker's connection stays until
					// the response came (and found no one to take it).
					_, _ = broker.Write(frame)
					client.Close()
					select {
					case <-copied:
					case <-time.After(10 * time.Second):
					}
					return
				}
			}
		}
		if _, err := broker.Write(frame); err != nil {
			return
		}
	}
}

// readFrame reads one size-prefixed Kafka request, size included.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 256<<20 {
		return nil, errors.New("kafka proxy: frame too large")
	}
	frame := make([]byte, 4+n)
	copy(frame, size[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// decodeRequest decodes a request frame (size, header v1 or v2, body).
func decodeRequest(frame []byte) (kmsg.Request, error) {
	if len(frame) < 14 {
		return nil, errors.New("kafka proxy: short request")
	}
	req := kmsg.RequestForKey(int16(binary.BigEndian.Uint16(frame[4:6])))
	if req == nil {
		return nil, errors.New("kafka proxy: unknown request key")
	}
	req.SetVersion(int16(binary.BigEndian.Uint16(frame[6:8])))
	// After size, key, version and correlation id: the client id.
	b := frame[12:]
	if n := int(int16(binary.BigEndian.Uint16(b))); n > 0 {
		if 2+n > len(b) {
			return nil, errors.New("kafka proxy: bad client id")
		}
		b = b[2+n:]
	} else {
		b = b[2:]
	}
	if req.IsFlexible() { // header v2: tagged fields after the client id
		uvarint := func() int {
			v, n := binary.Uvarint(b)
			if n <= 0 || int(v) > len(b)-n {
				b = nil
				return 0
			}
			b = b[n:]
			return int(v)
		}
		for n := uvarint(); n > 0 && b != nil; n-- {
			uvarint() // the tag
			b = b[uvarint():]
		}
		if b == nil {
			return nil, errors.New("kafka proxy: bad request header")
		}
	}
	if err := req.ReadFrom(b); err != nil {
		return nil, err
	}
	return req, nil
}
