# frozen_string_literal: true

class OrdersController < ApplicationController
  before_action :authenticate_customer!
  before_action :set_order, only: %i[show cancel]

  def index
    @orders = current_customer.orders.order(created_at: :desc).page(params[:page])
  end

  def show; end

  def create
    @order = current_customer.orders.build(order_params)
    @order.number = OrderNumber.next
    if @order.save
      OrderMailer.with(order: @order).bestellbestaetigung.deliver_later
      redirect_to @order, notice: t(".created")
    else
      render :new, status: :unprocessable_entity
    end
  end

  def cancel
    return head :conflict unless @order.cancellable?

    @order.update!(state: "cancelled")
    redirect_to orders_path
  end

  private

  def set_order
    @order = current_customer.orders.find_by!(number: params[:id])
  end

  def order_params
    params.require(:order).permit(:notes, line_items_attributes: %i[product_id quantity])
  end
end
