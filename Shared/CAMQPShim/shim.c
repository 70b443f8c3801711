#include "CAMQPShim.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

amqp_rpc_reply_t notify_amqp_login_plain(amqp_connection_state_t state,
                                         const char *vhost,
                                         int channel_max,
                                         int frame_max,
                                         int heartbeat,
                                         const char *user,
                                         const char *password) {
    return amqp_login(state, vhost, channel_max, frame_max, heartbeat,
                      AMQP_SASL_METHOD_PLAIN, user, password);
}

int notify_amqp_channel_close_ok(amqp_connection_state_t state, amqp_channel_t channel) {
    amqp_channel_close_ok_t close_ok = {0};
    return amqp_send_method(state, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &close_ok);
}

void notify_thread_set_name(const char *name) {
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

int notify_wakeup_create(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void notify_wakeup_signal(int wakeup_fd) {
    uint64_t one = 1;
    ssize_t written;
    do {
        written = write(wakeup_fd, &one, sizeof(one));
    } while (written < 0 && errno == EINTR);
}

void notify_wakeup_drain(int wakeup_fd) {
    uint64_t value;
    while (read(wakeup_fd, &value, sizeof(value)) > 0) {
    }
}

void notify_wakeup_close(int wakeup_fd) {
    close(wakeup_fd);
}

int notify_wait_readable(int socket_fd, int wakeup_fd, int timeout_ms) {
    struct pollfd fds[2];
    fds[0].fd = socket_fd;
    fds[0].events = POLLIN;
    fds[0].revents = 0;
    fds[1].fd = wakeup_fd;
    fds[1].events = POLLIN;
    fds[1].revents = 0;
    int ready;
    do {
        ready = poll(fds, 2, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) {
        return -1;
    }
    int result = 0;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        result |= 1;
    }
    if (fds[1].revents & POLLIN) {
        result |= 2;
    }
    return result;
}

amqp_method_number_t notify_frame_method_id(const amqp_frame_t *frame) {
    return frame->frame_type == AMQP_FRAME_METHOD ? frame->payload.method.id : 0;
}

amqp_channel_t notify_frame_channel(const amqp_frame_t *frame) {
    return frame->channel;
}

void *notify_frame_method_decoded(const amqp_frame_t *frame) {
    return frame->payload.method.decoded;
}
