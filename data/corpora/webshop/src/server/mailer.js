'use strict';

const net = require('net');
const config = require('./config');
const logger = require('./logger');

function sendMail(to, subject, body) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(config.smtp.port, config.smtp.host);
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.end(`To: ${to}\r\nSubject: ${subject}\r\n\r\n${body}\r\n.\r\n`);
      logger.info(`sent order confirmation to ${to}`);
      resolve();
    });
  });
}

function orderConfirmation(order) {
  const lines = order.lines.map((l) => `${l.quantity} x ${l.sku}`).join('\n');
  // TODO: localise the subject line
  return { subject: `Your order ${order.id}`, body: `Thanks for your order!\n\n${lines}` };
}

function passwordReset(user, link) {
  return {
    subject: 'Reset your webshop password',
    body: `Hello ${user.email},\n\nsomeone asked to reset the password of this account: ${link}\n`,
  };
}

module.exports = { sendMail, orderConfirmation, passwordReset };
