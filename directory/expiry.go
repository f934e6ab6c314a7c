package directory

import (
	"context"
	"log/slog"
	"time"
)

// RunExpiry purges expired registrations, and the events older than eventRetention, every
// interval until ctx ends. Reads already hide expired Things, so purging only reclaims
// space and tells watchers they are gone.
func (s *Service) RunExpiry(ctx context.Context, interval, eventRetention time.Duration, log *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			n, err := s.PurgeExpired(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Error("purging expired things", "error", err)
			case n > 0:
				log.Info("purged expired things", "count", n)
			}
			n, err = s.PurgeEvents(ctx, eventRetention)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Error("purging old events", "error", err)
			case n > 0:
				log.Debug("purged old events", "count", n)
			}
		}
	}
}
