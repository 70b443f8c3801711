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

/// Answers the broker's channel.close on `channel` (channel.close-ok), after which the channel can be opened again.
int notify_amqp_channel_close_ok(amqp_connection_state_t state, amqp_channel_t channel);

/// Creates a non-blocking eventfd used to wake a connection thread. Returns -1 on failure.
int notify_wakeup_create(void);
/// Makes the next `notify_wait_readable` return at once.
void notify_wakeup_signal(int wakeup_fd);
/// Drains pending wake-ups.
void notify_wakeup_drain(int wakeup_fd);
void notify_wakeup_close(int wakeup_fd);

/// Names the calling thread as the OS shows it (`top -H`, perf); the kernel keeps the first 15 bytes.
void notify_thread_set_name(const char *name);

/// Waits until `socket_fd` or `wakeup_fd` is readable, or `timeout_ms` passes.
/// Returns a bit set: 1 = socket readable, 2 = woken, 0 = timeout, -1 = error.
int notify_wait_readable(int socket_fd, int wakeup_fd, int timeout_ms);

/// Method ids and property flags: librabbitmq defines them as casts, which Swift does not import.
static const amqp_method_number_t notify_method_basic_deliver = AMQP_BASIC_DELIVER_METHOD;
static const amqp_method_number_t notify_method_basic_ack = AMQP_BASIC_ACK_METHOD;
static const amqp_method_number_t notify_method_basic_nack = AMQP_BASIC_NACK_METHOD;
static const amqp_method_number_t notify_method_basic_return = AMQP_BASIC_RETURN_METHOD;
static const amqp_method_number_t notify_method_basic_cancel = AMQP_BASIC_CANCEL_METHOD;
static const amqp_method_number_t notify_method_channel_close = AMQP_CHANNEL_CLOSE_METHOD;
static const amqp_method_number_t notify_method_connection_close = AMQP_CONNECTION_CLOSE_METHOD;

static const amqp_flags_t notify_flag_content_type = AMQP_BASIC_CONTENT_TYPE_FLAG;
static const amqp_flags_t notify_flag_headers = AMQP_BASIC_HEADERS_FLAG;
static const amqp_flags_t notify_flag_delivery_mode = AMQP_BASIC_DELIVERY_MODE_FLAG;
static const amqp_flags_t notify_flag_correlation_id = AMQP_BASIC_CORRELATION_ID_FLAG;
static const amqp_flags_t notify_flag_reply_to = AMQP_BASIC_REPLY_TO_FLAG;
static const amqp_flags_t notify_flag_message_id = AMQP_BASIC_MESSAGE_ID_FLAG;
static const amqp_flags_t notify_flag_user_id = AMQP_BASIC_USER_ID_FLAG;

/// The method id of a frame, or 0 when it is not a method frame.
amqp_method_number_t notify_frame_method_id(const amqp_frame_t *frame);
/// The decoded method of a method frame.
void *notify_frame_method_decoded(const amqp_frame_t *frame);
/// The channel of a frame.
amqp_channel_t notify_frame_channel(const amqp_frame_t *frame);

#endif
