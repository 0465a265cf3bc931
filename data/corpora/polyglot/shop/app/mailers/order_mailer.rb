# frozen_string_literal: true

# Mails about an order. The German templates are the originals; the English
# ones are translations. Subject lines come from config/locales/*.yml, except
# the fallback below for customers whose locale we do not have.
class OrderMailer < ApplicationMailer
  default from: "Kaffeekontor <bestellung@kaffeekontor.de>"

  FALLBACK_SUBJECT = "Ihre Bestellbestätigung"

  # Sent right after checkout (template: order_mailer/bestellbestaetigung).
  def bestellbestaetigung
    @order = params[:order]
    @customer = @order.customer
    I18n.with_locale(@customer.locale) do
      mail(to: @customer.email, subject: subject_for(:bestellbestaetigung))
    end
  end

  def cancelled
    @order = params[:order]
    mail(to: @order.customer.email, subject: subject_for(:cancelled))
  end

  private

  def subject_for(kind)
    t("order_mailer.#{kind}.subject", number: @order.number, default: nil) ||
      "#{FALLBACK_SUBJECT} #{@order.number}" # Bestellbestätigung without the key
  end
end
