package cluster

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// serverReady bounds how long the embedded server may take to listen.
const serverReady = 30 * time.Second

// startServer runs the embedded nats-server of c: JetStream in c.DataDir/nats, clients on
// c.Listen, routes on c.PeerListen to every member of c.Routes. It does not wait for the
// cluster's members: JetStream answers once a quorum of them is up.
func startServer(c Config) (*server.Server, error) {
	host, port, err := hostPort(c.Listen)
	if err != nil {
		return nil, fmt.Errorf("%w: --cluster-listen %q: %v", ErrConfig, c.Listen, err)
	}
	opts := &server.Options{
		ServerName: c.NodeID,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(c.DataDir, "nats"),
		NoSigs:     true, // the process's signals are serve's
		NoLog:      true,
		// A run request or event is small; a message past this is a bug, not a run.
		MaxPayload: 1 << 20,
	}
	if c.PeerListen != "" {
		h, p, err := hostPort(c.PeerListen)
		if err != nil {
			return nil, fmt.Errorf("%w: --cluster-peer-listen %q: %v", ErrConfig, c.PeerListen, err)
		}
		opts.Cluster = server.ClusterOpts{Name: c.Name, Host: h, Port: p, Advertise: c.PeerAdvertise}
		for _, r := range c.Routes {
			opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats-route", Host: r})
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: the embedded NATS server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(serverReady) {
		s.Shutdown()
		return nil, fmt.Errorf("cluster: the embedded NATS server does not listen on %s after %v (is the port taken?)", c.Listen, serverReady)
	}
	return s, nil
}

// hostPort splits a HOST:PORT.
func hostPort(a string) (string, int, error) {
	h, p, err := net.SplitHostPort(a)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("port %q is not 0 to 65535", p)
	}
	if n == 0 {
		n = server.RANDOM_PORT // nats-server reads 0 as its default port, 4222
	}
	return h, n, nil
}
