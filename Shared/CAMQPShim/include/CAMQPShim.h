#ifndef CAMQP_SHIM_H
#define CAMQP_SHIM_H

#include <amqp.h>
#include <amqp_tcp_socket.h>

/// `amqp_login` is variadic, which Swift cannot call; this fixes its arguments
/// to PLAIN authentication with a user name and password.
amqp_rpc_reply_t notify_amqp_login_plain(amqp_connection_state_t state,
                                         const char *vhost,
                                         int channel_max,
                                         int frame_max,
                                         int heartbeat,
                                         const char *user,
                                         const char *password);

/// Creates a non-blocking eventfd used to wake a connection thread. Returns -1 on failure.
int notify_wakeup_create(void);
/// Makes the next `notify_wait_readable` return at once.
void notify_wakeup_signal(int wakeup_fd);
/// Drains pending wake-ups.
void notify_wakeup_drain(int wakeup_fd);
void notify_wakeup_close(int wakeup_fd);

/// Waits until `socket_fd` or `wakeup_fd` is readable, or `timeout_ms` passes.
/// Returns a bit set: 1 = socket readable, 2 = woken, 0 = timeout, -1 = error.
int notify_wait_readable(int socket_fd, int wakeup_fd, int timeout_ms);

/// Reads the `multiple` flag and delivery tag out of a basic.ack / basic.nack frame.
int notify_frame_is_method(const amqp_frame_t *frame, amqp_method_number_t id);
void *notify_frame_method_decoded(const amqp_frame_t *frame);

#endif
