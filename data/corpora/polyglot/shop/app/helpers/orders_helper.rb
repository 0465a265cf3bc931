# frozen_string_literal: true

module OrdersHelper
  STATE_COLOURS = {
    "pending" => "grey",
    "paid" => "blue",
    "roasted" => "brown",
    "shipped" => "green",
    "cancelled" => "red"
  }.freeze

  # Renders the coloured state badge. The label comes from our own
  # translations, so it is safe to mark it html_safe here.
  def order_state_badge(order)
    colour = STATE_COLOURS.fetch(order.state, "grey")
    label = ERB::Util.html_escape(t("orders.states.#{order.state}"))
    %(<span class="badge badge-#{colour}">#{label}</span>).html_safe
  end

  def formatted_total(order)
    humanized_money_with_symbol(order.total)
  end

  # Customer notes are user input: never call html_safe on them, use
  # simple_format, which escapes for us.
  def order_notes(order)
    simple_format(order.notes)
  end

  def roast_date_line(order)
    date = order.roasted_on ? l(order.roasted_on, format: :long) : "&mdash;"
    "#{t('orders.show.roasted_on')}: #{date}".html_safe
  end
end
