package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// ClusterStatus is what GET /v1/cluster answers for a server that is a node of a cluster: the
// cluster package's Status, read when asked. The server does not import the cluster package, so
// a program that mounts the routes without a cluster links no NATS.
type ClusterStatus func(ctx context.Context) (any, error)

// cluster answers GET /v1/cluster: the cluster's nodes and queue, for the operator's admin keys
// (a key of the default tenant, with no user): a tenant's admin runs on the cluster, and does not
// see it.
func (s *Server) cluster(c echo.Context) error {
	p := principal(c)
	if p.Tenant != "" || p.User != "" {
		return httpError(http.StatusForbidden, "forbidden",
			"the cluster is the operator's: only an admin key of the default tenant, without a user, reads it")
	}
	if s.opts.Cluster == nil {
		return httpError(http.StatusNotFound, "not_clustered",
			"this server is not a node of a cluster: serve --cluster embedded or --cluster nats://... makes it one (see docs/cluster.md)")
	}
	st, err := s.opts.Cluster(c.Request().Context())
	if err != nil {
		return httpError(http.StatusServiceUnavailable, "cluster_unavailable", "the cluster's state cannot be read now: %v", err)
	}
	return c.JSON(http.StatusOK, st)
}
